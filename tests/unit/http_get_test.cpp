// The metadata services' client (notice/http_get.hpp) against real sockets on loopback: whole
// answers of each framing, an answer too large cut off at its bound, a refused connection told
// apart from a bad answer.
#include "notice/http_get.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace aml::http_get_test {
namespace {

// One connection served with `answer` (sent in pieces of `piece` bytes), then closed.
class OneAnswerServer {
 public:
  explicit OneAnswerServer(std::string answer, std::size_t piece = 1 << 20)
      : listener_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(listener_.get(), 1);
    socklen_t length = sizeof address;
    getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this, answer = std::move(answer), piece] {
      UniqueFd client(accept(listener_.get(), nullptr, nullptr));
      std::string request;
      char buffer[1024];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = recv(client.get(), buffer, sizeof buffer, 0);
        if (n <= 0) return;
        request.append(buffer, static_cast<std::size_t>(n));
      }
      request_ = request;
      for (std::size_t at = 0; at < answer.size(); at += piece) {
        const ssize_t n = send(client.get(), answer.data() + at,
                               std::min(piece, answer.size() - at), MSG_NOSIGNAL);
        if (n <= 0) break;
        sent_ += static_cast<std::size_t>(n);
      }
    });
  }
  ~OneAnswerServer() { thread_.join(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& request() const { return request_; }
  std::size_t sent() const { return sent_; }

 private:
  UniqueFd listener_;
  int port_ = 0;
  std::thread thread_;
  std::string request_;
  std::atomic<std::size_t> sent_{0};
};

// The request driven to its end as the supervisor's loop drives it.
const Result<HttpAnswer>& run(HttpGet& get) {
  for (int turns = 0; !get.done() && turns < 10000; ++turns) {
    pollfd p{get.fd(), static_cast<short>(get.wanted() & 0xffff), 0};
    poll(&p, 1, 5000);
    get.on_ready();
  }
  return get.result();
}

TEST(HttpGet, AWholeAnswerByContentLengthWithTheHeadersAsked) {
  OneAnswerServer server("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
  auto url = parse_http_url(server.url());
  ASSERT_TRUE(url) << url.error().message();
  HttpGet get(*url, "GET", "/metadata/x?a=1", {{"Metadata", "true"}});
  const auto& answer = run(get);
  ASSERT_TRUE(answer) << answer.error().message();
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->body, "hello");
  EXPECT_EQ(server.request().rfind("GET /metadata/x?a=1 HTTP/1.1\r\n", 0), 0u);
  EXPECT_NE(server.request().find("\r\nMetadata: true\r\n"), std::string::npos);
}

TEST(HttpGet, AChunkedAnswerComesWholeAndSlowPiecesToo) {
  OneAnswerServer server(
      "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: "
      "chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
      7);
  HttpGet get(*parse_http_url(server.url()), "GET", "/", {});
  const auto& answer = run(get);
  ASSERT_TRUE(answer) << answer.error().message();
  EXPECT_EQ(answer->status, 404);
  EXPECT_EQ(answer->body, "abcde");
}

TEST(HttpGet, AnAnswerLargerThanItsBoundIsCutOffThere) {
  OneAnswerServer server("HTTP/1.1 200 OK\r\n\r\n" + std::string(4 << 20, 'x'), 64 * 1024);
  HttpGet get(*parse_http_url(server.url()), "GET", "/", {});
  const auto& answer = run(get);
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().expected, "an answer of at most 64 KiB");
  EXPECT_FALSE(get.refused());
  EXPECT_EQ(get.fd(), -1);  // closed at once: the rest is never read
}

TEST(HttpGet, NoServiceIsRefusedAndGarbageIsNamed) {
  UniqueFd taken(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(taken.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);  // bound, no listen
  socklen_t length = sizeof address;
  getsockname(taken.get(), reinterpret_cast<sockaddr*>(&address), &length);
  HttpGet refused(*parse_http_url("http://127.0.0.1:" + std::to_string(ntohs(address.sin_port))),
                  "GET", "/", {});
  EXPECT_FALSE(run(refused));
  EXPECT_TRUE(refused.refused());

  OneAnswerServer server("SSH-2.0-OpenSSH\r\n");
  HttpGet garbage(*parse_http_url(server.url()), "GET", "/", {});
  const auto& answer = run(garbage);
  ASSERT_FALSE(answer);
  EXPECT_NE(answer.error().expected.find("an HTTP answer"), std::string::npos);
  EXPECT_FALSE(garbage.refused());
}

TEST(HttpGet, UrlsThatAreNotHttpAreNamed) {
  EXPECT_FALSE(parse_http_url("https://169.254.169.254"));
  EXPECT_FALSE(parse_http_url("http://:80"));
  EXPECT_FALSE(parse_http_url("http://127.0.0.1:99999"));
  auto v6 = parse_http_url("http://[::1]:8080/base/");
  ASSERT_TRUE(v6) << v6.error().message();
  EXPECT_EQ(v6->path, "/base");
  EXPECT_EQ(v6->host_header, "[::1]:8080");
}

}  // namespace
}  // namespace aml::http_get_test

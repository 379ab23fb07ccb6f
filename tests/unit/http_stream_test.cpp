// A watch's stream where etcd's messages come together: what one read of the socket took
// beyond the message asked for is said by has_message(), since the socket, read dry, will not
// wake a caller that waits on it (etcd_round_watch.cpp's fd() for start_get).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "etcd/http_connection.hpp"

namespace aml::etcd {
namespace {

using namespace std::chrono_literals;

std::string chunk(const std::string& text) {
  char size[16];
  std::snprintf(size, sizeof size, "%zx\r\n", text.size());
  return size + text + "\r\n";
}

// A server of one connection on 127.0.0.1: it reads the request's head and answers with
// `answer`, all in one write, then waits for the client to go.
class OneAnswerServer {
 public:
  explicit OneAnswerServer(std::string answer) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof at;
    if (bind(listener_, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 ||
        listen(listener_, 1) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&at), &length) != 0) {
      return;
    }
    port_ = ntohs(at.sin_port);
    serving_ = std::thread([this, answer = std::move(answer)] {
      const int client = accept(listener_, nullptr, nullptr);
      if (client < 0) return;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = read(client, buffer, sizeof buffer);
        if (n <= 0) break;
        request.append(buffer, static_cast<std::size_t>(n));
      }
      (void)!write(client, answer.data(), answer.size());
      while (read(client, buffer, sizeof buffer) > 0) {
      }
      close(client);
    });
  }
  ~OneAnswerServer() {
    if (serving_.joinable()) serving_.join();
    close(listener_);
  }
  int port() const { return port_; }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread serving_;
};

TEST(HttpStreamTest, MessagesThatCameInOneReadAreSaidWithoutTheSocket) {
  const std::string created = R"({"result":{"created":true}})";
  const std::string event = R"({"result":{"events":[{"kv":{"key":"YQ==","value":"Yg=="}}]}})";
  OneAnswerServer server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                         chunk(created + "\n") + chunk(event + "\n") + chunk("{\"result\":"));
  ASSERT_GT(server.port(), 0);
  {
    auto connection =
        HttpConnection::open("127.0.0.1", server.port(), std::chrono::steady_clock::now() + 5s);
    ASSERT_TRUE(connection.ok()) << connection.error().message();
    auto status = connection->post_stream("/v3/watch", "{}", std::chrono::steady_clock::now() + 5s);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(*status, 200);
    auto first = connection->next_message(std::chrono::steady_clock::now() + 5s);
    ASSERT_TRUE(first.ok() && *first) << "the created message";
    EXPECT_EQ(**first, created);
    EXPECT_TRUE(connection->has_message()) << "the event came in the same read";
    // Given without waiting: the socket has nothing more to say.
    auto second = connection->next_message(std::chrono::steady_clock::now());
    ASSERT_TRUE(second.ok() && *second);
    EXPECT_EQ(**second, event);
    EXPECT_FALSE(connection->has_message()) << "a message's start alone waits for the socket";
  }
}

TEST(HttpStreamTest, AStreamThatEndedInTheSameReadIsSaid) {
  OneAnswerServer server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                         chunk("{\"result\":{\"created\":true}}\n") + "0\r\n\r\n");
  ASSERT_GT(server.port(), 0);
  {
    auto connection =
        HttpConnection::open("127.0.0.1", server.port(), std::chrono::steady_clock::now() + 5s);
    ASSERT_TRUE(connection.ok()) << connection.error().message();
    ASSERT_TRUE(
        connection->post_stream("/v3/watch", "{}", std::chrono::steady_clock::now() + 5s).ok());
    auto first = connection->next_message(std::chrono::steady_clock::now() + 5s);
    ASSERT_TRUE(first.ok() && *first);
    EXPECT_TRUE(connection->has_message()) << "its end is next_message's to give";
    EXPECT_FALSE(connection->next_message(std::chrono::steady_clock::now()).ok());
  }
}

}  // namespace
}  // namespace aml::etcd

// The gRPC channel against a peer that answers what a test scripts (HTTP/2 frames written by
// hand): a reset stream, a refusal, a message cut short, a peer that is not HTTP/2 or hangs
// up. Each is an error that names what was wrong, within the call's deadline; the well-formed
// answer beside them shows the scripted peer itself is understood.
#include "etcd/grpc_channel.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "etcd/member_calls.hpp"

namespace aml::etcd {
namespace {

using namespace std::chrono_literals;

constexpr std::uint8_t kData = 0, kHeaders = 1, kReset = 3, kSettings = 4;
constexpr std::uint8_t kEndStream = 0x1, kEndHeaders = 0x4;

std::string frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                  const std::string& payload) {
  const auto n = static_cast<std::uint32_t>(payload.size());
  std::string out = {char(n >> 16), char(n >> 8), char(n), char(type), char(flags)};
  out += {char(stream >> 24), char(stream >> 16), char(stream >> 8), char(stream)};
  return out + payload;
}

// HPACK: a literal header field without indexing, its name new (short strings only).
std::string literal(const std::string& name, const std::string& value) {
  return std::string(1, '\0') + char(name.size()) + name + char(value.size()) + value;
}

const std::string kStatus200 = "\x88";  // HPACK's static table: ":status: 200"
const std::string kGrpcType = literal("content-type", "application/grpc");

std::string grpc_message(const std::string& bytes, std::uint32_t claimed) {
  return std::string{'\0', char(claimed >> 24), char(claimed >> 16), char(claimed >> 8),
                     char(claimed)} +
         bytes;
}

// One connection on loopback: reads the client's preface and frames until its request's
// HEADERS (stream 1) came, writes `answer`, then reads until the client hangs up (or, with
// `hang_up`, closes the connection itself).
class ScriptedPeer {
 public:
  ScriptedPeer(std::string answer, bool hang_up) : answer_(std::move(answer)), hang_up_(hang_up) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    if (bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        listen(listener_, 1) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      ADD_FAILURE() << "a loopback listener";
      return;
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedPeer() {
    finish();
    close(listener_);
  }
  int port() const { return port_; }
  // Once the client hung up: whether its request came.
  bool finish() {
    if (thread_.joinable()) thread_.join();
    return saw_request_;
  }

 private:
  // Waits up to 5 s for bytes; false at the end of the stream or the time.
  static bool read_more(int fd, std::string& into) {
    pollfd ready{fd, POLLIN, 0};
    if (poll(&ready, 1, 5000) != 1) return false;
    char buffer[4096];
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) return false;
    into.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  void serve() {
    pollfd waiting{listener_, POLLIN, 0};
    if (poll(&waiting, 1, 5000) != 1) return;
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::string in;
    std::size_t at = 24;  // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    while (!saw_request_ && read_more(fd, in)) {
      while (in.size() >= at + 9) {
        const std::size_t length = (std::size_t(std::uint8_t(in[at])) << 16) |
                                   (std::size_t(std::uint8_t(in[at + 1])) << 8) |
                                   std::uint8_t(in[at + 2]);
        if (in.size() < at + 9 + length) break;
        std::uint32_t stream = 0;
        std::memcpy(&stream, in.data() + at + 5, sizeof(stream));
        stream = ntohl(stream);
        if (in[at + 3] == char(kHeaders) && (stream & 0x7fffffffu) == 1) saw_request_ = true;
        at += 9 + length;
      }
    }
    (void)!write(fd, answer_.data(), answer_.size());
    std::string rest;
    while (!hang_up_ && read_more(fd, rest)) rest.clear();  // until the client hangs up
    close(fd);
  }

  std::string answer_;
  bool hang_up_;
  int listener_ = -1;
  int port_ = 0;
  bool saw_request_ = false;
  std::thread thread_;
};

class GrpcChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(GrpcChannel::unavailable(), "") << "libnghttp2 (Debian's libnghttp2-14) opens";
  }

  // A range call against a peer that answers `answer`.
  Result<HttpAnswer> call(const std::string& answer, bool hang_up = false) {
    ScriptedPeer peer(answer, hang_up);
    const auto deadline = Clock::now() + 3s;
    auto channel = GrpcChannel::open("127.0.0.1", peer.port(), deadline, nullptr);
    if (!channel) return channel.error();
    const auto started = Clock::now();
    auto answered = (*channel)->unary("/v3/kv/range", {{"key", "YQ=="}}, deadline);
    EXPECT_LT(Clock::now() - started, 4s) << "within the call's deadline";
    channel->reset();  // hang up: the peer ends
    EXPECT_TRUE(peer.finish()) << "the request came to the peer";
    return answered;
  }

  const std::string settings_ = frame(kSettings, 0, 0, "");
};

TEST_F(GrpcChannelTest, AWellFormedAnswerIsTheGatewaysJson) {
  const std::string range = "\x20\x03";  // RangeResponse{count: 3}
  auto answer = call(settings_ + frame(kHeaders, kEndHeaders, 1, kStatus200 + kGrpcType) +
                     frame(kData, 0, 1, grpc_message(range, 2)) +
                     frame(kHeaders, kEndStream | kEndHeaders, 1, literal("grpc-status", "0")));
  ASSERT_TRUE(answer) << answer.error().message();
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(nlohmann::json::parse(answer->body).value("count", ""), "3");
}

TEST_F(GrpcChannelTest, AResetStreamIsAnErrorThatSaysSo) {
  auto answer = call(settings_ + frame(kReset, 0, 1, std::string("\0\0\0\x02", 4)));
  ASSERT_FALSE(answer);
  EXPECT_NE(answer.error().message().find("stream was reset, HTTP/2 error 2"), std::string::npos)
      << answer.error().message();
}

TEST_F(GrpcChannelTest, ARefusalIsTheGatewaysErrorWithItsMessageDecoded) {
  auto answer = call(settings_ + frame(kHeaders, kEndStream | kEndHeaders, 1,
                                       kStatus200 + kGrpcType + literal("grpc-status", "7") +
                                           literal("grpc-message", "permission%20denied%2")));
  ASSERT_TRUE(answer) << answer.error().message();
  EXPECT_EQ(answer->status, 400);
  const auto body = nlohmann::json::parse(answer->body);
  EXPECT_EQ(body.value("code", 0), 7);
  EXPECT_EQ(body.value("message", ""), "permission denied%2");  // a stray '%' kept as it came
}

// A member without a quorum (cut off, or restarted while its peers were away) answered a
// lease's grant with gRPC's "unknown" and "context deadline exceeded": another member, or this
// one later, may serve; the call goes on rather than name it a refusal (fault campaign etcd 400:
// a launcher started then exited 2). A refusal (permission) still is one.
TEST_F(GrpcChannelTest, ARequestOutOfTimeInTheMemberIsNoRefusal) {
  auto may_serve_later = [&](const std::string& code, const std::string& message) {
    auto answer = call(settings_ + frame(kHeaders, kEndStream | kEndHeaders, 1,
                                         kStatus200 + kGrpcType + literal("grpc-status", code) +
                                             literal("grpc-message", message)));
    EXPECT_TRUE(answer) << answer.error().message();
    return answer ? member_cannot_serve_now(answer->status, nlohmann::json::parse(answer->body))
                  : false;
  };
  EXPECT_TRUE(may_serve_later("2", "context%20deadline%20exceeded"));
  EXPECT_TRUE(may_serve_later("2", "etcdserver:%20request%20timed%20out"));
  EXPECT_TRUE(may_serve_later("14", "etcdserver:%20no%20leader"));
  EXPECT_FALSE(may_serve_later("7", "etcdserver:%20permission%20denied"));
  EXPECT_FALSE(may_serve_later("3", "etcdserver:%20key%20is%20not%20provided"));
}

TEST_F(GrpcChannelTest, AMessageCutShortOrMissingIsRefused) {
  const std::string trailers =
      frame(kHeaders, kEndStream | kEndHeaders, 1, literal("grpc-status", "0"));
  auto cut = call(settings_ + frame(kHeaders, kEndHeaders, 1, kStatus200 + kGrpcType) +
                  frame(kData, 0, 1, grpc_message("\x20\x03", 100)) + trailers);
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message().find("whole gRPC message"), std::string::npos)
      << cut.error().message();
  auto none = call(settings_ + frame(kHeaders, kEndHeaders, 1, kStatus200 + kGrpcType) + trailers);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("a gRPC message in the answer"), std::string::npos)
      << none.error().message();
  auto no_status =
      call(settings_ + frame(kHeaders, kEndStream | kEndHeaders, 1, "\x8d" /* :status: 404 */));
  ASSERT_FALSE(no_status);
  EXPECT_NE(no_status.error().message().find("HTTP 404, no grpc-status"), std::string::npos)
      << no_status.error().message();
}

TEST_F(GrpcChannelTest, APeerThatIsNotHttp2OrHangsUpIsAnErrorInTime) {
  auto http1 = call("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
  ASSERT_FALSE(http1);
  EXPECT_NE(http1.error().message().find("does not speak HTTP/2; is it etcd's client port?"),
            std::string::npos)
      << http1.error().message();
  EXPECT_NE(http1.error().message().find("127.0.0.1:"), std::string::npos);
  auto hung_up = call(settings_, true);  // and closes once the request came
  ASSERT_FALSE(hung_up);
  EXPECT_NE(hung_up.error().message().find("127.0.0.1:"), std::string::npos)
      << hung_up.error().message();
}

}  // namespace
}  // namespace aml::etcd

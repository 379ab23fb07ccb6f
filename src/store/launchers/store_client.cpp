#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <aml/store.hpp>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "store/core/dial.hpp"
#include "store/launchers/handshake.hpp"
#include "store/launchers/wire.hpp"

namespace aml {

using store::FieldReader;
using store::FrameWriter;
using store::Opcode;
using store::Status;

namespace {

constexpr std::uint32_t kMaxReply = 16u << 20;

Error store_error(const std::string& where, const std::string& what) {
  return invalid("store", where, what);
}

std::uint32_t clamp_ms(std::chrono::milliseconds timeout) {
  auto ms = timeout.count();
  return ms <= 0 ? 0u : ms >= 0xffffffffLL ? 0xffffffffu : static_cast<std::uint32_t>(ms);
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool recv_all(int fd, char* into, std::size_t size) {
  while (size > 0) {
    ssize_t n = recv(fd, into, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    into += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// A launcher's control connection can be idle for a whole run (its sign of life goes on the
// watch): the kernel's probes after a minute keep a NAT's or conntrack's entry for it (a
// Kubernetes Service, a cloud load balancer drop idle ones), at no cost to either process.
void probe_when_idle(int fd) {
  int on = 1, idle_s = 60, interval_s = 15, probes = 4;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
}

}  // namespace

Result<StoreClient> StoreClient::connect(const std::string& host, int port,
                                         const std::string& token,
                                         const StoreCredentials& credentials,
                                         std::chrono::milliseconds timeout) {
  auto fd = store::dial(host, port, timeout);
  if (!fd) return fd.error();
  probe_when_idle(*fd);
  StoreClient client(*fd, host + ":" + std::to_string(port));
  auto shaken = client.handshake(token, credentials);
  if (!shaken) return shaken.error();
  return client;
}

Result<StoreClient> StoreClient::connect(const std::string& host, int port,
                                         const std::string& token,
                                         std::chrono::milliseconds timeout) {
  return connect(host, port, token, StoreCredentials{}, timeout);
}

StoreClient::StoreClient(StoreClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      where_(std::move(other.where_)),
      reply_timeout_(other.reply_timeout_) {}

StoreClient& StoreClient::operator=(StoreClient&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    where_ = std::move(other.where_);
    reply_timeout_ = other.reply_timeout_;
  }
  return *this;
}

StoreClient::~StoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> StoreClient::call(const std::string& frame,
                                      std::chrono::milliseconds server_wait) {
  auto sent = send_request(frame);
  if (!sent) return sent.error();
  return read_reply(server_wait);
}

Result<bool> StoreClient::send_request(const std::string& frame) {
  if (fd_ < 0) return store_error(where_, "an open connection");
  if (!send_all(fd_, frame))
    return store_error(where_, std::string("to take the request (") + std::strerror(errno) + ")");
  return true;
}

Result<std::string> StoreClient::read_reply(std::chrono::milliseconds server_wait) {
  if (reply_timeout_.count() > 0) {
    // The server may hold a get or wait for server_wait; past that, silence means trouble.
    auto limit = std::chrono::duration_cast<std::chrono::microseconds>(
        std::min(reply_timeout_ + server_wait, std::chrono::milliseconds(1LL << 40)));
    timeval tv{static_cast<time_t>(limit.count() / 1000000),
               static_cast<suseconds_t>(limit.count() % 1000000)};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  // A reply that did not come in time, or came cut or malformed, leaves the connection out of
  // step: the next call would read this one's late reply as its own. It is closed, and every
  // later call fails (the node group then dials again: node_group_comeback.cpp).
  auto out_of_step = [this](const std::string& expected) {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
    return store_error(where_, expected);
  };
  unsigned char prefix[4];
  if (!recv_all(fd_, reinterpret_cast<char*>(prefix), 4)) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return out_of_step("a reply within " + std::to_string(reply_timeout_.count()) + " ms (" +
                         std::string(store::kNoAnswer) + ")");
    }
    return out_of_step("a reply (" + std::string(store::kConnectionClosed) + ")");
  }
  std::uint32_t length =
      prefix[0] | prefix[1] << 8 | prefix[2] << 16 | std::uint32_t(prefix[3]) << 24;
  if (length == 0 || length > kMaxReply) return out_of_step("a well-formed reply");
  std::string body(length, '\0');
  if (!recv_all(fd_, body.data(), length))
    return out_of_step("a whole reply (" + std::string(store::kConnectionClosed) + ")");
  if (static_cast<Status>(body[0]) == Status::error) {
    FieldReader in(std::string_view(body).substr(1));
    auto message = in.str(kMaxReply);
    return store_error(where_,
                       "to accept the request; it said: " + std::string(message.value_or("?")));
  }
  return body;
}

namespace {

FrameWriter request(Opcode op) {
  FrameWriter w;
  w.u8(static_cast<std::uint8_t>(op));
  return w;
}

FrameWriter& keys_field(FrameWriter& w, const std::vector<std::string>& keys) {
  w.u32(static_cast<std::uint32_t>(keys.size()));
  for (const std::string& k : keys) w.str(k);
  return w;
}

}  // namespace

Result<bool> StoreClient::set(std::string_view key, std::string_view value) {
  auto reply = call(request(Opcode::set).str(key).str(value).finish());
  if (!reply) return reply.error();
  return true;
}

Result<std::optional<std::string>> StoreClient::get(std::string_view key,
                                                    std::chrono::milliseconds timeout) {
  auto reply = call(request(Opcode::get).str(key).u32(clamp_ms(timeout)).finish(), timeout);
  return get_result(reply);
}

Result<bool> StoreClient::start_get(std::string_view key, std::chrono::milliseconds timeout) {
  return send_request(request(Opcode::get).str(key).u32(clamp_ms(timeout)).finish());
}

Result<std::optional<std::string>> StoreClient::finish_get() {
  auto reply = read_reply(kForever);
  return get_result(reply);
}

Result<std::optional<std::string>> StoreClient::get_result(const Result<std::string>& reply) {
  if (!reply) return reply.error();
  FieldReader in(*reply);
  if (in.u8() == static_cast<std::uint8_t>(Status::timeout)) return std::optional<std::string>();
  auto value = in.str(kMaxReply);
  if (!value) return store_error(where_, "a value in the reply");
  return std::optional<std::string>(std::string(*value));
}

Result<std::int64_t> StoreClient::add(std::string_view key, std::int64_t delta) {
  auto reply = call(request(Opcode::add).str(key).i64(delta).finish());
  if (!reply) return reply.error();
  FieldReader in(*reply);
  in.u8();
  auto value = in.i64();
  if (!value) return store_error(where_, "a number in the reply");
  return *value;
}

Result<bool> StoreClient::check(const std::vector<std::string>& keys) {
  FrameWriter w = request(Opcode::check);
  auto reply = call(keys_field(w, keys).finish());
  if (!reply) return reply.error();
  FieldReader in(*reply);
  in.u8();
  return in.u8().value_or(0) != 0;
}

Result<bool> StoreClient::wait(const std::vector<std::string>& keys,
                               std::chrono::milliseconds timeout) {
  FrameWriter w = request(Opcode::wait);
  auto reply = call(keys_field(w, keys).u32(clamp_ms(timeout)).finish(), timeout);
  if (!reply) return reply.error();
  return static_cast<Status>((*reply)[0]) == Status::ok;
}

Result<std::vector<std::optional<std::string>>> StoreClient::get_all(
    const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  FrameWriter w = request(Opcode::get_all);
  auto reply = call(keys_field(w, keys).u32(clamp_ms(timeout)).finish(), timeout);
  if (!reply) return reply.error();
  FieldReader in(*reply);
  in.u8();
  auto count = in.u32();
  if (!count || *count != keys.size()) return store_error(where_, "a value for every key");
  std::vector<std::optional<std::string>> values;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto present = in.u8();
    auto value = in.str(kMaxReply);
    if (!present || !value) return store_error(where_, "a value for every key");
    values.push_back(*present ? std::optional<std::string>(*value) : std::nullopt);
  }
  return values;
}

Result<bool> StoreClient::erase(std::string_view key) {
  auto reply = call(request(Opcode::erase).str(key).finish());
  if (!reply) return reply.error();
  FieldReader in(*reply);
  in.u8();
  return in.u8().value_or(0) != 0;
}

Result<std::string> StoreClient::compare_set(std::string_view key, std::string_view expected,
                                             std::string_view desired) {
  auto reply = call(request(Opcode::compare_set).str(key).str(expected).str(desired).finish());
  if (!reply) return reply.error();
  FieldReader in(*reply);
  in.u8();
  auto value = in.str(kMaxReply);
  if (!value) return store_error(where_, "a value in the reply");
  return std::string(*value);
}

Result<bool> StoreClient::set_last_will(std::string_view key, std::string_view value) {
  auto reply = call(request(Opcode::last_will).str(key).str(value).finish());
  if (!reply) return reply.error();
  return true;
}

Result<bool> StoreClient::clear_last_will() {
  auto reply = call(request(Opcode::clear_last_will).finish());
  if (!reply) return reply.error();
  return true;
}

Result<bool> StoreClient::identify(std::string_view name) {
  auto reply = call(request(Opcode::identify).str(name).finish());
  if (!reply) return reply.error();
  return true;
}

Result<std::vector<std::string>> StoreClient::silent(std::chrono::milliseconds at_least) {
  auto reply = call(request(Opcode::silent).u32(clamp_ms(at_least)).finish());
  if (!reply) return reply.error();
  FieldReader in(*reply);
  in.u8();
  auto count = in.u32();
  if (!count) return store_error(where_, "a list of names");
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto name = in.str(kMaxReply);
    if (!name) return store_error(where_, "a list of names");
    names.emplace_back(*name);
  }
  return names;
}

Result<std::int64_t> StoreClient::clock_ns() {
  auto reply = call(request(Opcode::clock).finish());
  if (!reply) return reply.error();
  FieldReader in(*reply);
  in.u8();
  auto value = in.i64();
  if (!value) return store_error(where_, "a time in the reply");
  return *value;
}

Result<bool> StoreClient::heartbeat() { return send_request(request(Opcode::heartbeat).finish()); }

void StoreClient::set_reply_timeout(std::chrono::milliseconds timeout) {
  reply_timeout_ = timeout;
  unsigned int ms = clamp_ms(timeout);
  if (fd_ < 0) return;
  setsockopt(fd_, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
  if (timeout.count() == 0) {
    // For ever again: no receive timeout left from an earlier setting (read_reply sets one).
    timeval none{};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
  }
}

std::string StoreClient::local_address() const {
  sockaddr_storage addr{};
  socklen_t length = sizeof(addr);
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length) != 0) return {};
  char host[NI_MAXHOST] = {};
  if (getnameinfo(reinterpret_cast<sockaddr*>(&addr), length, host, sizeof(host), nullptr, 0,
                  NI_NUMERICHOST) != 0) {
    return {};
  }
  return host;
}

}  // namespace aml

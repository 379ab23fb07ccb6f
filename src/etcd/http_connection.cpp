#include "etcd/http_connection.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "etcd/socket_wait.hpp"

namespace aml::etcd {
namespace {

constexpr std::size_t kMaxAnswer = 64u << 20;  // a range of thousands of keys stays far below

// A non-blocking connect that gives up at the deadline (a host that is gone does not answer).
Result<int> connect_by(const addrinfo& a, Clock::time_point deadline, std::string& why) {
  int fd = socket(a.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return invalid("socket", "", std::strerror(errno));
  if (connect(fd, a.ai_addr, a.ai_addrlen) != 0 && errno != EINPROGRESS) {
    why = std::strerror(errno);
    ::close(fd);
    return invalid("connect", "", why);
  }
  if (!ready(fd, POLLOUT, deadline)) {
    why = "no answer";
    ::close(fd);
    return invalid("connect", "", why);
  }
  int error = 0;
  socklen_t size = sizeof(error);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
  if (error != 0) {
    why = std::strerror(error);
    ::close(fd);
    return invalid("connect", "", why);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

}  // namespace

Result<HttpConnection> HttpConnection::open(const std::string& host, int port,
                                            Clock::time_point deadline,
                                            const std::shared_ptr<TlsContext>& tls) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return invalid("etcd", where, std::string("a host that resolves (") + gai_strerror(rc) + ")");
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    auto fd = connect_by(*a, deadline, why);
    if (!fd) continue;
    HttpConnection connection(*fd, where);
    if (tls) {
      auto stream = TlsStream::connect(tls, *fd, host, where, deadline);
      if (!stream) return stream.error();
      connection.tls_ = std::move(*stream);
    }
    return connection;
  }
  return invalid("etcd", where, "an etcd member accepting connections (" + why + ")");
}

Error HttpConnection::failure(const std::string& what) const {
  return invalid("etcd", where_, what);
}

std::string HttpConnection::local_address() const {
  sockaddr_storage address{};
  socklen_t size = sizeof(address);
  if (getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
      address.ss_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&address)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&address)->sin_addr);
  return inet_ntop(address.ss_family, raw, text, sizeof(text)) ? text : "";
}

Result<bool> HttpConnection::send_request(const std::string& path, const std::string& body,
                                          Clock::time_point deadline) {
  const std::string request =
      "POST " + path + " HTTP/1.1\r\nHost: " + where_ +
      (authorization_.empty() ? "" : "\r\nAuthorization: " + authorization_) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  std::string_view left = request;
  while (tls_ && !left.empty()) {
    auto n = tls_->write(left);
    if (!n) return n.error();
    if (*n == 0 && !ready(fd_.get(), tls_->wants(), deadline)) {
      return failure("to take a request in time");
    }
    left.remove_prefix(*n);
  }
  while (!left.empty()) {
    if (!ready(fd_.get(), POLLOUT, deadline)) return failure("to take a request in time");
    ssize_t n = send(fd_.get(), left.data(), left.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return failure(std::string("to take a request (") + std::strerror(errno) + ")");
    left.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Decrypted bytes that OpenSSL holds are read before the socket is polled (it may have none).
Result<bool> HttpConnection::fill_tls(Clock::time_point deadline) {
  char buffer[16384];
  for (;;) {
    auto n = tls_->read(buffer, sizeof(buffer));
    if (!n) return n.error();
    if (*n > 0) {
      raw_.append(buffer, *n);
      while (tls_->pending()) {
        auto more = tls_->read(buffer, sizeof(buffer));
        if (!more) return more.error();
        if (*more == 0) break;
        raw_.append(buffer, *more);
      }
      if (raw_.size() > kMaxAnswer) return failure("an answer below 64 MiB");
      return true;
    }
    if (!ready(fd_.get(), tls_->wants(), deadline)) return false;
  }
}

Result<bool> HttpConnection::fill(Clock::time_point deadline) {
  if (tls_) return fill_tls(deadline);
  if (!ready(fd_.get(), POLLIN, deadline)) return false;
  char buffer[65536];
  for (;;) {
    ssize_t n = recv(fd_.get(), buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return false;
    if (n < 0) return failure(std::string("an answer (") + std::strerror(errno) + ")");
    if (n == 0) {
      return failure(std::string("an answer (the connection closed") +
                     (raw_.empty() ? "; does etcd want TLS: https:// members, --rdzv-conf "
                                     "cacert=...?)"
                                   : ")"));
    }
    raw_.append(buffer, static_cast<std::size_t>(n));
    if (raw_.size() > kMaxAnswer) return failure("an answer below 64 MiB");
    return true;
  }
}

Result<std::optional<std::string>> HttpConnection::read_line(Clock::time_point deadline) {
  for (;;) {
    if (auto end = raw_.find("\r\n"); end != std::string::npos) {
      std::string line = raw_.substr(0, end);
      raw_.erase(0, end + 2);
      return std::optional<std::string>(std::move(line));
    }
    auto more = fill(deadline);
    if (!more) return more.error();
    if (!*more) return std::optional<std::string>();
  }
}

Result<int> HttpConnection::read_head(Clock::time_point deadline) {
  auto status_line = read_line(deadline);
  if (!status_line) return status_line.error();
  if (!*status_line) return failure("an answer in time");
  int status = 0;
  if (std::sscanf((*status_line)->c_str(), "HTTP/1.%*d %d", &status) != 1) {
    return failure("an HTTP answer (it said \"" + (*status_line)->substr(0, 80) + "\")");
  }
  chunked_ = false;
  length_ = -1;
  for (;;) {
    auto header = read_line(deadline);
    if (!header) return header.error();
    if (!*header) return failure("an answer in time");
    if ((*header)->empty()) break;
    std::string name = (*header)->substr(0, (*header)->find(':'));
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    const std::string value = (*header)->substr(std::min((*header)->size(), name.size() + 1));
    if (name == "transfer-encoding" && value.find("chunked") != std::string::npos) chunked_ = true;
    if (name == "content-length") length_ = std::atoll(value.c_str());
  }
  return status;
}

Result<bool> HttpConnection::dechunk() {
  for (;;) {
    const auto end = raw_.find("\r\n");
    if (end == std::string::npos) return true;
    const long long size = std::strtoll(raw_.c_str(), nullptr, 16);
    if (size < 0) return failure("a well-formed chunked answer");
    if (size == 0) {
      stream_ended_ = true;
      raw_.clear();
      return true;
    }
    const std::size_t whole = end + 2 + static_cast<std::size_t>(size) + 2;
    if (raw_.size() < whole) return true;
    body_.append(raw_, end + 2, static_cast<std::size_t>(size));
    raw_.erase(0, whole);
  }
}

Result<HttpAnswer> HttpConnection::post(const std::string& path, const std::string& body,
                                        Clock::time_point deadline) {
  auto sent = send_request(path, body, deadline);
  if (!sent) return sent.error();
  auto status = read_head(deadline);
  if (!status) return status.error();
  HttpAnswer answer;
  answer.status = *status;
  if (chunked_) {
    body_.clear();
    stream_ended_ = false;
    for (;;) {
      if (auto decoded = dechunk(); !decoded) return decoded.error();
      if (stream_ended_) break;
      auto more = fill(deadline);
      if (!more) return more.error();
      if (!*more) return failure("a whole answer in time");
    }
    answer.body = std::move(body_);
    body_.clear();
    return answer;
  }
  if (length_ < 0) return failure("an answer with its length");
  while (raw_.size() < static_cast<std::size_t>(length_)) {
    auto more = fill(deadline);
    if (!more) return more.error();
    if (!*more) return failure("a whole answer in time");
  }
  answer.body = raw_.substr(0, static_cast<std::size_t>(length_));
  raw_.erase(0, static_cast<std::size_t>(length_));
  return answer;
}

Result<int> HttpConnection::post_stream(const std::string& path, const std::string& body,
                                        Clock::time_point deadline) {
  auto sent = send_request(path, body, deadline);
  if (!sent) return sent.error();
  auto status = read_head(deadline);
  if (!status) return status;
  body_.clear();
  stream_ended_ = false;
  if (!chunked_) {
    // An error answer has a length: take its body as the one message.
    if (length_ > 0) {
      while (raw_.size() < static_cast<std::size_t>(length_)) {
        auto more = fill(deadline);
        if (!more) return more.error();
        if (!*more) break;
      }
      body_ = raw_ + "\n";
      raw_.clear();
    }
    stream_ended_ = true;
  }
  return status;
}

Result<std::optional<std::string>> HttpConnection::next_message(Clock::time_point deadline) {
  for (;;) {
    if (chunked_) {
      if (auto decoded = dechunk(); !decoded) return decoded.error();
    }
    if (auto end = body_.find('\n'); end != std::string::npos) {
      std::string message = body_.substr(0, end);
      body_.erase(0, end + 1);
      if (message.find_first_not_of(" \r\t") == std::string::npos) continue;
      return std::optional<std::string>(std::move(message));
    }
    if (stream_ended_) return failure("its watch to go on (the stream ended)");
    auto more = fill(deadline);
    if (!more) return more.error();
    if (!*more) return std::optional<std::string>();
  }
}

}  // namespace aml::etcd

#include "etcd/http_connection.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace aml::etcd {
namespace {

constexpr std::size_t kMaxHttpAnswer = 64u << 20;  // a range of thousands of keys stays far below

}  // namespace

Result<HttpConnection> HttpConnection::open(const std::string& host, int port,
                                            Clock::time_point deadline,
                                            const std::shared_ptr<TlsContext>& tls) {
  auto socket = MemberSocket::connect(host, port, deadline, tls);
  if (!socket) return socket.error();
  return HttpConnection(std::move(*socket));
}

Error HttpConnection::failure(const std::string& what) const {
  return invalid("etcd", socket_.where, what);
}

Result<bool> HttpConnection::send_request(const std::string& path, const std::string& body,
                                          Clock::time_point deadline) {
  const std::string request =
      "POST " + path + " HTTP/1.1\r\nHost: " + socket_.where +
      (authorization_.empty() ? "" : "\r\nAuthorization: " + authorization_) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  return socket_.write_all(request, deadline);
}

Result<bool> HttpConnection::fill(Clock::time_point deadline) {
  char buffer[65536];
  auto n = socket_.read_some(buffer, sizeof(buffer), deadline);
  if (!n) {
    if (raw_.empty() && !socket_.tls && n.error().message().find("closed") != std::string::npos) {
      return failure(
          "an answer (the connection closed; does etcd want TLS: https:// members, --rdzv-conf "
          "cacert=...?)");
    }
    return n.error();
  }
  if (*n == 0) return false;
  raw_.append(buffer, *n);
  if (raw_.size() > kMaxHttpAnswer) return failure("an answer below 64 MiB");
  return true;
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

bool HttpConnection::has_message() {
  if (chunked_) {
    if (auto decoded = dechunk(); !decoded) return true;  // next_message() gives the error
  }
  if (stream_ended_) return true;
  // A whole line that is not blank (next_message() skips blank ones; a line's start alone
  // waits for the socket).
  for (std::size_t start = 0, end; (end = body_.find('\n', start)) != std::string::npos;
       start = end + 1) {
    const std::size_t text = body_.find_first_not_of(" \r\t", start);
    if (text < end) return true;
  }
  return false;
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

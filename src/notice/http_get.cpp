#include "notice/http_get.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cctype>
#include <cstring>

#include "util/errno_text.hpp"

namespace aml {
namespace {

std::string lower(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

}  // namespace

Result<HttpUrl> parse_http_url(const std::string& text) {
  constexpr std::string_view kScheme = "http://";
  if (text.compare(0, kScheme.size(), kScheme) != 0)
    return invalid("AML_LAUNCH_METADATA_URL", text, "an http:// URL (http://HOST[:PORT])");
  std::string rest = text.substr(kScheme.size());
  HttpUrl url;
  url.text = text;
  const auto slash = rest.find('/');
  url.path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::string authority = rest.substr(0, slash);
  while (!url.path.empty() && url.path.size() > 1 && url.path.back() == '/') url.path.pop_back();
  if (url.path == "/") url.path.clear();  // the request's own path starts with '/'
  url.host_header = authority;
  std::string host = authority, port = "80";
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos)
      return invalid("AML_LAUNCH_METADATA_URL", text, "a closed [IPv6] address");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':')
        return invalid("AML_LAUNCH_METADATA_URL", text, "[IPv6]:PORT");
      port = authority.substr(close + 2);
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return invalid("AML_LAUNCH_METADATA_URL", text, "a host");
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
      std::stoi(port) > 65535) {
    return invalid("AML_LAUNCH_METADATA_URL", text, "a port from 1 to 65535");
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int status = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); status != 0) {
    return invalid("AML_LAUNCH_METADATA_URL", text,
                   std::string("a host that resolves (") + gai_strerror(status) + ")");
  }
  std::memcpy(&url.address, found->ai_addr, found->ai_addrlen);
  url.address_length = found->ai_addrlen;
  freeaddrinfo(found);
  return url;
}

HttpGet::HttpGet(const HttpUrl& url, const std::string& method, const std::string& path,
                 const std::vector<std::pair<std::string, std::string>>& headers)
    : where_(url.text + path) {
  request_ = method + " " + url.path + path + " HTTP/1.1\r\nHost: " + url.host_header + "\r\n";
  if (method != "GET") request_ += "Content-Length: 0\r\n";
  for (const auto& [name, value] : headers) request_ += name + ": " + value + "\r\n";
  request_ += "Connection: close\r\n\r\n";
  socket_.reset(::socket(url.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket_) {
    fail("a socket (" + errno_text(errno) + ")");
    return;
  }
  if (::connect(socket_.get(), reinterpret_cast<const sockaddr*>(&url.address),
                url.address_length) == 0) {
    state_ = State::sending;
  } else if (errno != EINPROGRESS) {
    const int error = errno;
    fail("a connection (" + errno_text(error) + ")",
         error == ECONNREFUSED || error == ENETUNREACH || error == EHOSTUNREACH);
  }
}

std::uint32_t HttpGet::wanted() const {
  if (done()) return 0;
  return state_ == State::reading ? EPOLLIN : EPOLLOUT;
}

void HttpGet::on_ready() {
  if (done()) return;
  if (state_ == State::connecting) {
    int error = 0;
    socklen_t length = sizeof error;
    getsockopt(socket_.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error == EINPROGRESS || error == EALREADY) return;
    if (error != 0) {
      return fail("a connection (" + errno_text(error) + ")",
                  error == ECONNREFUSED || error == ENETUNREACH || error == EHOSTUNREACH);
    }
    state_ = State::sending;
  }
  if (state_ == State::sending) {
    while (sent_ < request_.size()) {
      const ssize_t n =
          ::send(socket_.get(), request_.data() + sent_, request_.size() - sent_, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (n < 0) return fail("to send the request (" + errno_text(errno) + ")");
      sent_ += static_cast<std::size_t>(n);
    }
    state_ = State::reading;
    return;
  }
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::recv(socket_.get(), buffer, sizeof buffer, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n < 0) return fail("an answer (" + errno_text(errno) + ")");
    if (n == 0) return finish();
    if (answer_.size() + static_cast<std::size_t>(n) > kMaxAnswer)
      return fail("an answer of at most " + std::to_string(kMaxAnswer / 1024) + " KiB");
    answer_.append(buffer, static_cast<std::size_t>(n));
  }
}

void HttpGet::fail(const std::string& expected, bool refused) {
  refused_ = refused;
  result_.emplace(invalid("metadata", where_, expected));
  socket_.reset();
}

void HttpGet::finish() {
  result_.emplace(parse_http_answer(where_, answer_));
  socket_.reset();
}

Result<HttpAnswer> parse_http_answer(const std::string& where, const std::string& answer) {
  const auto head_end = answer.find("\r\n\r\n");
  if (head_end == std::string::npos || answer.compare(0, 7, "HTTP/1.") != 0)
    return invalid(
        "metadata", where,
        "an HTTP answer (it sent " + std::to_string(answer.size()) + " bytes without one)");
  HttpAnswer parsed;
  const auto space = answer.find(' ');
  if (space == std::string::npos || space > head_end || space + 4 > answer.size())
    return invalid("metadata", where, "an HTTP status line");
  parsed.status = 0;
  for (std::size_t i = space + 1; i < space + 4; ++i) {
    if (answer[i] < '0' || answer[i] > '9') return invalid("metadata", where, "an HTTP status");
    parsed.status = parsed.status * 10 + (answer[i] - '0');
  }
  std::optional<std::size_t> length;
  bool chunked = false;
  std::size_t line = answer.find("\r\n") + 2;
  while (line < head_end) {
    const auto next = answer.find("\r\n", line);
    const std::string header = answer.substr(line, next - line);
    line = next + 2;
    const auto colon = header.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = lower(header.substr(0, colon));
    std::string value = header.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (name == "content-length") {
      if (value.empty() || value.size() > 9 ||
          value.find_first_not_of("0123456789") != std::string::npos)
        return invalid("metadata", where, "a Content-Length that is a number");
      length = std::stoul(value);
    } else if (name == "transfer-encoding" && lower(value).find("chunked") != std::string::npos) {
      chunked = true;
    }
  }
  std::string body = answer.substr(head_end + 4);
  if (chunked) {
    std::string decoded;
    std::size_t at = 0;
    for (;;) {
      const auto size_end = body.find("\r\n", at);
      if (size_end == std::string::npos)
        return invalid("metadata", where, "a whole chunked answer");
      std::size_t size = 0;
      std::size_t digits = 0;
      for (std::size_t i = at; i < size_end && std::isxdigit(static_cast<unsigned char>(body[i]));
           ++i, ++digits) {
        if (digits >= 8) return invalid("metadata", where, "a chunk size below 4 GiB");
        size =
            size * 16 + static_cast<std::size_t>(std::isdigit(static_cast<unsigned char>(body[i]))
                                                     ? body[i] - '0'
                                                     : (body[i] | 0x20) - 'a' + 10);
      }
      if (digits == 0) return invalid("metadata", where, "a chunk size");
      at = size_end + 2;
      if (size == 0) break;
      if (size > body.size() - at) return invalid("metadata", where, "a whole chunked answer");
      decoded.append(body, at, size);
      at += size + 2;
    }
    body = std::move(decoded);
  } else if (length) {
    if (body.size() < *length)
      return invalid("metadata", where, "the whole answer its Content-Length says");
    body.resize(*length);
  }
  parsed.body = std::move(body);
  return parsed;
}

}  // namespace aml

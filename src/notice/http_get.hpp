// One HTTP/1.1 GET to a metadata service that never blocks its caller (DESIGN §4: the
// supervisor's loop waits for its socket like any other): connect, send, read to the end,
// each step when the socket is ready. The answer is bounded (kMaxAnswer); the caller bounds
// the time (it drops a request whose deadline passed).
#pragma once

#include <sys/socket.h>

#include <aml/error.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/unique_fd.hpp"

namespace aml {

// "http://HOST[:PORT][/PATH]": an address (IPv4, [IPv6]) or a name resolved once, here.
struct HttpUrl {
  std::string text;  // as given, for messages
  sockaddr_storage address{};
  socklen_t address_length = 0;
  std::string host_header;  // HOST[:PORT]
  std::string path;         // "/" at least
};
Result<HttpUrl> parse_http_url(const std::string& text);

struct HttpAnswer {
  int status = 0;
  std::string body;
};

class HttpGet {
 public:
  static constexpr std::size_t kMaxAnswer = 64 * 1024;  // head and body together

  // Starts the request (a non-blocking connect). `path` is appended to the URL's path;
  // `method`: GET, or PUT without a body (AWS's token).
  HttpGet(const HttpUrl& url, const std::string& method, const std::string& path,
          const std::vector<std::pair<std::string, std::string>>& headers);

  int fd() const { return socket_.get(); }
  // EPOLLOUT while connecting or sending, EPOLLIN while reading; 0 once done.
  std::uint32_t wanted() const;
  // Does what the socket is ready for.
  void on_ready();
  bool done() const { return result_.has_value(); }
  // Once done: the answer, or what went wrong ("refused" says the service is not there at all).
  const Result<HttpAnswer>& result() const { return *result_; }
  bool refused() const { return refused_; }

 private:
  void fail(const std::string& expected, bool refused = false);
  void finish();  // the whole answer is in: parse it

  std::string where_;
  UniqueFd socket_;
  enum class State { connecting, sending, reading } state_ = State::connecting;
  std::string request_;
  std::size_t sent_ = 0;
  std::string answer_;
  std::optional<Result<HttpAnswer>> result_;
  bool refused_ = false;
};

// Parses a whole HTTP/1.x answer (head, then a body of Content-Length, chunked or to the end).
Result<HttpAnswer> parse_http_answer(const std::string& where, const std::string& answer);

}  // namespace aml

// A minimal HTTP/1.1 client for etcd's v3 JSON gateway (DESIGN §5): POST with a JSON body,
// keep-alive, answers with Content-Length or chunked, and streamed answers (watches) read
// message by message. Over plain TCP, or TLS where the session has a TLS context (tls.hpp).
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "etcd/tls.hpp"
#include "util/unique_fd.hpp"

namespace aml::etcd {

using Clock = std::chrono::steady_clock;

struct HttpAnswer {
  int status = 0;
  std::string body;
};

class HttpConnection {
 public:
  // Connects within the deadline (a host that does not answer is an error by then).
  // With `tls`, the TLS handshake too, by the same deadline.
  static Result<HttpConnection> open(const std::string& host, int port, Clock::time_point deadline,
                                     const std::shared_ptr<TlsContext>& tls = nullptr);
  // etcd's auth token, sent with every request from now on ("": none).
  void set_authorization(std::string token) { authorization_ = std::move(token); }

  // One request and its whole answer.
  Result<HttpAnswer> post(const std::string& path, const std::string& body,
                          Clock::time_point deadline);
  // A request whose answer streams (a watch): the status line and headers are read here;
  // next_message() gives the stream's messages one by one.
  Result<int> post_stream(const std::string& path, const std::string& body,
                          Clock::time_point deadline);
  // The next newline-separated message of the stream; nullopt when the deadline passed
  // first. An error when the stream ended.
  Result<std::optional<std::string>> next_message(Clock::time_point deadline);

  int fd() const { return fd_.get(); }
  const std::string& where() const { return where_; }
  std::string local_address() const;

 private:
  HttpConnection(int fd, std::string where) : fd_(fd), where_(std::move(where)) {}
  Result<bool> send_request(const std::string& path, const std::string& body,
                            Clock::time_point deadline);
  Result<bool> fill(Clock::time_point deadline);  // reads what is there, waiting until deadline
  Result<bool> fill_tls(Clock::time_point deadline);
  Result<std::optional<std::string>> read_line(Clock::time_point deadline);
  Result<int> read_head(Clock::time_point deadline);  // status; sets chunked_/length_
  // Moves the decoded body bytes of a chunked answer from raw_ to body_ (as far as possible).
  Result<bool> dechunk();
  Error failure(const std::string& what) const;

  UniqueFd fd_;
  std::string where_;
  std::unique_ptr<TlsStream> tls_;
  std::string authorization_;
  std::string raw_;   // bytes read, not yet consumed
  std::string body_;  // a chunked stream's decoded bytes
  bool chunked_ = false;
  long long length_ = -1;
  bool stream_ended_ = false;
};

}  // namespace aml::etcd

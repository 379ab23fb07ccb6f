// A minimal HTTP/1.1 client for etcd's v3 JSON gateway (DESIGN §5): POST with a JSON body,
// keep-alive, answers with Content-Length or chunked, and streamed answers (watches) read
// message by message. Over plain TCP, or TLS where the session has a TLS context (tls.hpp).
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "etcd/member_socket.hpp"
#include "etcd/unary_channel.hpp"

namespace aml::etcd {

class HttpConnection : public UnaryChannel {
 public:
  // Connects within the deadline (a host that does not answer is an error by then).
  // With `tls`, the TLS handshake too, by the same deadline.
  static Result<HttpConnection> open(const std::string& host, int port, Clock::time_point deadline,
                                     const std::shared_ptr<TlsContext>& tls = nullptr);
  // etcd's auth token, sent with every request from now on ("": none).
  void set_authorization(std::string token) override { authorization_ = std::move(token); }
  // A unary call of the gateway: the request as JSON text.
  Result<HttpAnswer> unary(const std::string& path, const nlohmann::json& request,
                           Clock::time_point deadline) override {
    return post(path, request.dump(), deadline);
  }

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
  // Whether next_message() has something to give without reading the socket: a message (or
  // the stream's end) that came in one read with the one before it. The socket's descriptor
  // does not say so: a caller that waits on it asks this first.
  bool has_message();

  int fd() const { return socket_.fd.get(); }
  const std::string& where() const override { return socket_.where; }
  std::string local_address() const override { return socket_.local_address(); }

 private:
  explicit HttpConnection(MemberSocket socket) : socket_(std::move(socket)) {}
  Result<bool> send_request(const std::string& path, const std::string& body,
                            Clock::time_point deadline);
  Result<bool> fill(Clock::time_point deadline);  // reads what is there, waiting until deadline
  Result<std::optional<std::string>> read_line(Clock::time_point deadline);
  Result<int> read_head(Clock::time_point deadline);  // status; sets chunked_/length_
  // Moves the decoded body bytes of a chunked answer from raw_ to body_ (as far as possible).
  Result<bool> dechunk();
  Error failure(const std::string& what) const;

  MemberSocket socket_;
  std::string authorization_;
  std::string raw_;   // bytes read, not yet consumed
  std::string body_;  // a chunked stream's decoded bytes
  bool chunked_ = false;
  long long length_ = -1;
  bool stream_ended_ = false;
};

}  // namespace aml::etcd

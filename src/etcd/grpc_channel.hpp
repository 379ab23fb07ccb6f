// etcd's gRPC API for a session's unary calls (DESIGN §5): HTTP/2 through libnghttp2, opened
// at run time as OpenSSL is (the release still needs glibc alone; where the image lacks it,
// the session speaks the JSON gateway). One connection carries the calls one after another;
// each answers as the gateway would (etcd_protobuf.hpp), so the session above is unchanged.
// Against the gateway it saves etcd its second hop (a gRPC call to itself) and the JSON: half
// of what each call cost etcd's CPU (benchmarks/RESULTS.md).
#pragma once

#include <aml/error.hpp>
#include <memory>
#include <string>

#include "etcd/http2_abi.hpp"
#include "etcd/member_socket.hpp"
#include "etcd/unary_channel.hpp"

namespace aml::etcd {

class GrpcChannel : public UnaryChannel {
 public:
  // Whether libnghttp2 opens here ("" when it does, else why not).
  static std::string unavailable();
  // Connects (over TLS, offering "h2") and sends HTTP/2's preface, within the deadline.
  static Result<std::unique_ptr<GrpcChannel>> open(const std::string& host, int port,
                                                   Clock::time_point deadline,
                                                   const std::shared_ptr<TlsContext>& tls);
  ~GrpcChannel() override;
  GrpcChannel(const GrpcChannel&) = delete;
  GrpcChannel& operator=(const GrpcChannel&) = delete;

  Result<HttpAnswer> unary(const std::string& path, const nlohmann::json& request,
                           Clock::time_point deadline) override;
  void set_authorization(std::string token) override { token_ = std::move(token); }
  const std::string& where() const override { return socket_.where; }
  std::string local_address() const override { return socket_.local_address(); }

  // What one call gathers from its stream (filled by libnghttp2's callbacks).
  struct Call {
    int stream = 0;
    std::string request;  // gRPC's framed message
    std::size_t sent = 0;
    std::string answer;  // the DATA frames' bytes
    std::string grpc_status, grpc_message, http_status;
    bool closed = false;
    unsigned reset_code = 0;  // RST_STREAM's error code (0: closed cleanly)
  };

 private:
  GrpcChannel(const h2::Api* api, MemberSocket socket) : api_(api), socket_(std::move(socket)) {}
  Result<bool> flush(Clock::time_point deadline);    // what the session has to send
  Result<bool> receive(Clock::time_point deadline);  // false: nothing came in time
  Error failure(const std::string& what) const;

  const h2::Api* api_;
  MemberSocket socket_;
  h2::Session* session_ = nullptr;
  std::string token_;
  Call call_;
};

}  // namespace aml::etcd

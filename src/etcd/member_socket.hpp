// A connection to one etcd member (DESIGN §5): resolved, connected by a deadline, over plain
// TCP or TLS, the latter offering an application protocol where the caller asks (ALPN "h2"
// for etcd's gRPC API). Shared by the JSON gateway's HTTP/1.1 (http_connection.hpp) and the
// gRPC channel (grpc_channel.hpp).
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "etcd/tls.hpp"
#include "util/unique_fd.hpp"

namespace aml::etcd {

using Clock = std::chrono::steady_clock;

struct MemberSocket {
  UniqueFd fd;
  std::unique_ptr<TlsStream> tls;  // null: plain TCP
  std::string where;               // "host:port", for errors

  // Connects (and shakes hands) within the deadline. alpn: the protocol offered over TLS
  // ("" none).
  static Result<MemberSocket> connect(const std::string& host, int port, Clock::time_point deadline,
                                      const std::shared_ptr<TlsContext>& tls,
                                      std::string_view alpn = {});
  // Everything, by the deadline.
  Result<bool> write_all(std::string_view data, Clock::time_point deadline);
  // What is there (waiting for some until the deadline: 0 bytes then). An error when the
  // connection closed or failed.
  Result<std::size_t> read_some(char* buffer, std::size_t size, Clock::time_point deadline);
  std::string local_address() const;
};

}  // namespace aml::etcd

// How a launcher's session makes etcd's unary calls (DESIGN §5): through the v3 JSON gateway
// (HTTP/1.1, http_connection.hpp) or etcd's gRPC API (HTTP/2 and protobuf, grpc_channel.hpp).
// Both take the gateway's path and JSON and answer as the gateway does, so the session and
// the rendezvous above it are written once.
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace aml::etcd {

struct HttpAnswer {
  int status = 0;    // HTTP's: 200 for an answer
  std::string body;  // the gateway's JSON: the answer, or {"error", "code", "message"}
};

class UnaryChannel {
 public:
  virtual ~UnaryChannel() = default;
  // One call: path as the gateway names it ("/v3/kv/range"), the request as its JSON.
  virtual Result<HttpAnswer> unary(const std::string& path, const nlohmann::json& request,
                                   std::chrono::steady_clock::time_point deadline) = 0;
  // etcd's auth token, sent with every call from now on ("": none).
  virtual void set_authorization(std::string token) = 0;
  virtual const std::string& where() const = 0;
  virtual std::string local_address() const = 0;
};

}  // namespace aml::etcd

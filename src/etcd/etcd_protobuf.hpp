// etcd's gRPC messages (api/etcdserverpb/rpc.proto, the few the launcher sends) as the JSON
// gateway spells them (DESIGN §5): a request in the gateway's JSON becomes the protobuf
// message, and the protobuf answer the gateway's JSON (64-bit numbers as strings, bytes in
// base64, zero fields left out), so that one session speaks either transport.
#pragma once

#include <aml/error.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace aml::etcd {

struct MessageSchema;  // etcd_protobuf.cpp

struct GrpcMethod {
  std::string_view path;  // gRPC's: "/etcdserverpb.KV/Range"
  const MessageSchema* request;
  const MessageSchema* response;
  bool streamed;  // the gateway wraps a stream's answer in {"result": ...} (lease keepalive)
};

// The gRPC method behind a gateway path ("/v3/kv/range"); nullptr where there is none.
const GrpcMethod* grpc_method(std::string_view gateway_path);

// The request as protobuf; an error names a field the message does not have.
Result<std::string> to_protobuf(const GrpcMethod& method, const nlohmann::json& request);
// The answer as the gateway's JSON; an error where the bytes are not the message.
Result<nlohmann::json> from_protobuf(const GrpcMethod& method, std::string_view message);

}  // namespace aml::etcd

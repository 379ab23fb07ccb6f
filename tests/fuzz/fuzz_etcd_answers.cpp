// libFuzzer target over etcd's gRPC answers and requests (src/etcd/etcd_protobuf.cpp): any
// bytes as any answer the launcher reads give the gateway's JSON or an error, never a crash or
// a read outside them; any JSON as any request gives protobuf bytes or an error.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "etcd/etcd_protobuf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size < 1) return 0;
  static constexpr const char* kPaths[] = {
      "/v3/kv/range",    "/v3/kv/put",       "/v3/kv/deleterange",  "/v3/kv/txn",
      "/v3/lease/grant", "/v3/lease/revoke", "/v3/lease/keepalive", "/v3/auth/authenticate"};
  // The first byte picks the method (its low bits) and the direction (its high bit).
  const aml::etcd::GrpcMethod* method = aml::etcd::grpc_method(kPaths[bytes[0] % 8]);
  if (method == nullptr) __builtin_trap();
  const std::string_view rest(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  if (bytes[0] & 0x80) {
    auto request = nlohmann::json::parse(rest, nullptr, false);
    if (!request.is_discarded()) (void)aml::etcd::to_protobuf(*method, request);
    return 0;
  }
  auto answer = aml::etcd::from_protobuf(*method, rest);
  if (answer.ok() && !answer->is_object()) __builtin_trap();
  return 0;
}

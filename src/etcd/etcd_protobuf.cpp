#include "etcd/etcd_protobuf.hpp"

#include <array>

#include "etcd/protobuf_schema.hpp"

namespace aml::etcd {

using nlohmann::json;

namespace {

using T = FieldType;

// rpc.proto's messages (and mvccpb's KeyValue), by field number.
const MessageSchema& response_header() {
  static const MessageSchema m{"ResponseHeader",
                               {{1, "cluster_id", T::uint64},
                                {2, "member_id", T::uint64},
                                {3, "revision", T::int64},
                                {4, "raft_term", T::uint64}}};
  return m;
}
const MessageSchema& key_value() {
  static const MessageSchema m{"KeyValue",
                               {{1, "key", T::bytes},
                                {2, "create_revision", T::int64},
                                {3, "mod_revision", T::int64},
                                {4, "version", T::int64},
                                {5, "value", T::bytes},
                                {6, "lease", T::int64}}};
  return m;
}
const MessageSchema& range_request() {
  static const MessageSchema m{
      "RangeRequest",
      {{1, "key", T::bytes},
       {2, "range_end", T::bytes},
       {3, "limit", T::int64},
       {4, "revision", T::int64},
       {5, "sort_order", T::enumeration, false, nullptr, {"NONE", "ASCEND", "DESCEND"}},
       {6,
        "sort_target",
        T::enumeration,
        false,
        nullptr,
        {"KEY", "VERSION", "CREATE", "MOD", "VALUE"}},
       {7, "serializable", T::boolean},
       {8, "keys_only", T::boolean},
       {9, "count_only", T::boolean},
       {10, "min_mod_revision", T::int64},
       {11, "max_mod_revision", T::int64},
       {12, "min_create_revision", T::int64},
       {13, "max_create_revision", T::int64}}};
  return m;
}
const MessageSchema& range_response() {
  static const MessageSchema m{"RangeResponse",
                               {{1, "header", T::message, false, response_header},
                                {2, "kvs", T::message, true, key_value},
                                {3, "more", T::boolean},
                                {4, "count", T::int64}}};
  return m;
}
const MessageSchema& put_request() {
  static const MessageSchema m{"PutRequest",
                               {{1, "key", T::bytes},
                                {2, "value", T::bytes},
                                {3, "lease", T::int64},
                                {4, "prev_kv", T::boolean},
                                {5, "ignore_value", T::boolean},
                                {6, "ignore_lease", T::boolean}}};
  return m;
}
const MessageSchema& put_response() {
  static const MessageSchema m{"PutResponse",
                               {{1, "header", T::message, false, response_header},
                                {2, "prev_kv", T::message, false, key_value}}};
  return m;
}
const MessageSchema& delete_range_request() {
  static const MessageSchema m{
      "DeleteRangeRequest",
      {{1, "key", T::bytes}, {2, "range_end", T::bytes}, {3, "prev_kv", T::boolean}}};
  return m;
}
const MessageSchema& delete_range_response() {
  static const MessageSchema m{"DeleteRangeResponse",
                               {{1, "header", T::message, false, response_header},
                                {2, "deleted", T::int64},
                                {3, "prev_kvs", T::message, true, key_value}}};
  return m;
}
const MessageSchema& txn_request();
const MessageSchema& txn_response();
const MessageSchema& request_op() {
  static const MessageSchema m{
      "RequestOp",
      {{1, "request_range", T::message, false, range_request},
       {2, "request_put", T::message, false, put_request},
       {3, "request_delete_range", T::message, false, delete_range_request},
       {4, "request_txn", T::message, false, txn_request}}};
  return m;
}
const MessageSchema& response_op() {
  static const MessageSchema m{
      "ResponseOp",
      {{1, "response_range", T::message, false, range_response},
       {2, "response_put", T::message, false, put_response},
       {3, "response_delete_range", T::message, false, delete_range_response},
       {4, "response_txn", T::message, false, txn_response}}};
  return m;
}
const MessageSchema& compare() {
  static const MessageSchema m{
      "Compare",
      {{1, "result", T::enumeration, false, nullptr, {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"}},
       {2,
        "target",
        T::enumeration,
        false,
        nullptr,
        {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"}},
       {3, "key", T::bytes},
       {4, "version", T::int64},
       {5, "create_revision", T::int64},
       {6, "mod_revision", T::int64},
       {7, "value", T::bytes},
       {8, "lease", T::int64},
       {64, "range_end", T::bytes}}};
  return m;
}
const MessageSchema& txn_request() {
  static const MessageSchema m{"TxnRequest",
                               {{1, "compare", T::message, true, compare},
                                {2, "success", T::message, true, request_op},
                                {3, "failure", T::message, true, request_op}}};
  return m;
}
const MessageSchema& txn_response() {
  static const MessageSchema m{"TxnResponse",
                               {{1, "header", T::message, false, response_header},
                                {2, "succeeded", T::boolean},
                                {3, "responses", T::message, true, response_op}}};
  return m;
}
const MessageSchema& lease_grant_request() {
  static const MessageSchema m{"LeaseGrantRequest", {{1, "TTL", T::int64}, {2, "ID", T::int64}}};
  return m;
}
const MessageSchema& lease_grant_response() {
  static const MessageSchema m{"LeaseGrantResponse",
                               {{1, "header", T::message, false, response_header},
                                {2, "ID", T::int64},
                                {3, "TTL", T::int64},
                                {4, "error", T::text}}};
  return m;
}
const MessageSchema& lease_id() {  // LeaseRevokeRequest and LeaseKeepAliveRequest
  static const MessageSchema m{"LeaseRequest", {{1, "ID", T::int64}}};
  return m;
}
const MessageSchema& lease_revoke_response() {
  static const MessageSchema m{"LeaseRevokeResponse",
                               {{1, "header", T::message, false, response_header}}};
  return m;
}
const MessageSchema& lease_keep_alive_response() {
  static const MessageSchema m{"LeaseKeepAliveResponse",
                               {{1, "header", T::message, false, response_header},
                                {2, "ID", T::int64},
                                {3, "TTL", T::int64}}};
  return m;
}
const MessageSchema& authenticate_request() {
  static const MessageSchema m{"AuthenticateRequest",
                               {{1, "name", T::text}, {2, "password", T::text}}};
  return m;
}
const MessageSchema& authenticate_response() {
  static const MessageSchema m{
      "AuthenticateResponse",
      {{1, "header", T::message, false, response_header}, {2, "token", T::text}}};
  return m;
}

}  // namespace

const GrpcMethod* grpc_method(std::string_view gateway_path) {
  static const std::array<std::pair<std::string_view, GrpcMethod>, 8> methods = {{
      {"/v3/kv/range", {"/etcdserverpb.KV/Range", &range_request(), &range_response(), false}},
      {"/v3/kv/put", {"/etcdserverpb.KV/Put", &put_request(), &put_response(), false}},
      {"/v3/kv/deleterange",
       {"/etcdserverpb.KV/DeleteRange", &delete_range_request(), &delete_range_response(), false}},
      {"/v3/kv/txn", {"/etcdserverpb.KV/Txn", &txn_request(), &txn_response(), false}},
      {"/v3/lease/grant",
       {"/etcdserverpb.Lease/LeaseGrant", &lease_grant_request(), &lease_grant_response(), false}},
      {"/v3/lease/revoke",
       {"/etcdserverpb.Lease/LeaseRevoke", &lease_id(), &lease_revoke_response(), false}},
      {"/v3/lease/keepalive",
       {"/etcdserverpb.Lease/LeaseKeepAlive", &lease_id(), &lease_keep_alive_response(), true}},
      {"/v3/auth/authenticate",
       {"/etcdserverpb.Auth/Authenticate", &authenticate_request(), &authenticate_response(),
        false}},
  }};
  for (const auto& [path, method] : methods) {
    if (path == gateway_path) return &method;
  }
  return nullptr;
}

Result<std::string> to_protobuf(const GrpcMethod& method, const json& request) {
  return encode_message(*method.request, request);
}

Result<json> from_protobuf(const GrpcMethod& method, std::string_view message) {
  auto answer = decode_message(*method.response, message);
  if (!answer || !method.streamed) return answer;
  return json{{"result", std::move(*answer)}};
}

}  // namespace aml::etcd

// etcd's gRPC messages as the JSON gateway spells them (src/etcd/etcd_protobuf.cpp): requests
// to the exact protobuf bytes, answers back to the gateway's JSON, and hostile bytes refused
// without a crash.
#include "etcd/etcd_protobuf.hpp"

#include <gtest/gtest.h>

#include <random>

#include "etcd/base64.hpp"

namespace aml::etcd {
namespace {

using nlohmann::json;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

const GrpcMethod& method(const char* gateway_path) {
  const GrpcMethod* found = grpc_method(gateway_path);
  EXPECT_NE(found, nullptr) << gateway_path;
  return *found;
}

TEST(EtcdProtobufTest, EachGatewayPathHasItsGrpcMethod) {
  EXPECT_EQ(method("/v3/kv/range").path, "/etcdserverpb.KV/Range");
  EXPECT_EQ(method("/v3/kv/txn").path, "/etcdserverpb.KV/Txn");
  EXPECT_EQ(method("/v3/lease/keepalive").path, "/etcdserverpb.Lease/LeaseKeepAlive");
  EXPECT_EQ(method("/v3/auth/authenticate").path, "/etcdserverpb.Auth/Authenticate");
  EXPECT_EQ(grpc_method("/v3/watch"), nullptr);  // watches stay on the gateway
}

TEST(EtcdProtobufTest, ARequestBecomesItsProtobufBytes) {
  auto put = to_protobuf(method("/v3/kv/put"),
                         {{"key", to_base64("a")}, {"value", to_base64("b")}, {"lease", "5"}});
  ASSERT_TRUE(put.ok()) << put.error().message();
  EXPECT_EQ(*put, bytes({0x0a, 1, 'a', 0x18, 5, 0x12, 1, 'b'}));  // the JSON's keys in order

  auto range =
      to_protobuf(method("/v3/kv/range"), {{"key", to_base64("k")}, {"serializable", true}});
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(*range, bytes({0x0a, 1, 'k', 0x38, 1}));

  // A negative number is ten bytes; an enum goes by its name; a nested message by its length.
  auto txn = to_protobuf(
      method("/v3/kv/txn"),
      {{"compare", json::array({{{"key", to_base64("k")},
                                 {"target", "CREATE"},
                                 {"result", "NOT_EQUAL"},
                                 {"create_revision", "0"}}})},
       {"success", json::array({{{"request_put", {{"key", to_base64("k")}, {"lease", -1}}}}})}});
  ASSERT_TRUE(txn.ok()) << txn.error().message();
  const std::string compare = bytes({0x28, 0, 0x1a, 1, 'k', 0x08, 3, 0x10, 1});
  std::string put_k = bytes({0x0a, 1, 'k', 0x18});
  put_k += std::string(9, '\xff') + '\x01';
  const std::string op = bytes({0x12, static_cast<int>(put_k.size())}) + put_k;
  const std::string expected = bytes({0x0a, static_cast<int>(compare.size())}) + compare +
                               bytes({0x12, static_cast<int>(op.size())}) + op;
  EXPECT_EQ(*txn, expected);
}

TEST(EtcdProtobufTest, ARequestWithAFieldTheMessageLacksIsRefusedByName) {
  auto wrong = to_protobuf(method("/v3/kv/range"), {{"keys", to_base64("k")}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message().find("RangeRequest.keys"), std::string::npos)
      << wrong.error().message();
  EXPECT_FALSE(
      to_protobuf(method("/v3/kv/txn"), {{"compare", json::array({{{"target", "SIZE"}}})}}).ok());
  EXPECT_FALSE(to_protobuf(method("/v3/kv/put"), {{"key", "not base64!"}}).ok());
  EXPECT_FALSE(to_protobuf(method("/v3/kv/put"), {{"lease", "twelve"}}).ok());
}

TEST(EtcdProtobufTest, AnAnswerBecomesTheGatewaysJson) {
  // RangeResponse: header {revision 7}, one kv, count 1, and a field of a newer etcd (15).
  const std::string kv = bytes({0x0a, 1, 'k', 0x18, 3, 0x2a, 1, 'v'});
  const std::string answer =
      bytes({0x0a, 2, 0x18, 7, 0x12, static_cast<int>(kv.size())}) + kv + bytes({0x20, 1, 0x78, 5});
  auto parsed = from_protobuf(method("/v3/kv/range"), answer);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(*parsed, json::parse(R"({"header": {"revision": "7"}, "count": "1",
      "kvs": [{"key": "aw==", "mod_revision": "3", "value": "dg=="}]})"));
  // A stream's answer comes wrapped, as the gateway sends it.
  auto kept = from_protobuf(method("/v3/lease/keepalive"), bytes({0x10, 9, 0x18, 10}));
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, json::parse(R"({"result": {"ID": "9", "TTL": "10"}})"));
  // A transaction's nested answers, and a false flag left out.
  const std::string put_answer = bytes({0x12, 2, 0x0a, 0});
  auto txn =
      from_protobuf(method("/v3/kv/txn"),
                    bytes({0x10, 1, 0x1a, static_cast<int>(put_answer.size())}) + put_answer);
  ASSERT_TRUE(txn.ok());
  EXPECT_EQ(*txn,
            json::parse(R"({"succeeded": true, "responses": [{"response_put": {"header": {}}}]})"));
}

TEST(EtcdProtobufTest, HostileBytesAreRefusedWithoutACrash) {
  const GrpcMethod& txn = method("/v3/kv/txn");
  EXPECT_FALSE(from_protobuf(txn, bytes({0x1a, 5, 0x0a})).ok());   // a length past the end
  EXPECT_FALSE(from_protobuf(txn, std::string(11, '\xff')).ok());  // a varint with no end
  EXPECT_FALSE(from_protobuf(txn, bytes({0x08, 1})).ok());         // header as a number
  EXPECT_FALSE(from_protobuf(txn, bytes({0x0b})).ok());            // a group (wire type 3)
  // Transactions in transactions, deeper than any answer etcd sends.
  std::string deep;
  for (int i = 0; i < 30; ++i) {
    std::string op = "\x22";
    std::string length;
    std::uint64_t n = deep.size();
    while (n >= 0x80) {
      length.push_back(static_cast<char>((n & 0x7f) | 0x80));
      n >>= 7;
    }
    length.push_back(static_cast<char>(n));
    op += length + deep;
    std::string outer = "\x1a";
    n = op.size();
    length.clear();
    while (n >= 0x80) {
      length.push_back(static_cast<char>((n & 0x7f) | 0x80));
      n >>= 7;
    }
    length.push_back(static_cast<char>(n));
    deep = outer + length + op;
  }
  EXPECT_FALSE(from_protobuf(txn, deep).ok());
  // Random bytes: an answer or an error, never a crash (the sanitizer build runs this too).
  std::mt19937 random(32);
  int refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string noise(random() % 64, '\0');
    for (char& c : noise) c = static_cast<char>(random());
    for (const char* path : {"/v3/kv/txn", "/v3/kv/range", "/v3/lease/grant"}) {
      if (!from_protobuf(method(path), noise).ok()) ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace aml::etcd

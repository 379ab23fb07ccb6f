// etcd's authentication token expires (its --auth-token-ttl, 300 s by default): a launcher that
// was quiet longer than that (a round that ran long between two leases' renewals) asks for a
// new one and its call goes on, against a real etcd with its authentication on.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "etcd/base64.hpp"
#include "etcd/etcd_rendezvous.hpp"
#include "etcd/http_connection.hpp"
#include "etcd_server.hpp"

namespace aml::etcd {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// One request of etcd's gateway; its JSON answer (null where none came).
json ask(const std::string& endpoint, const std::string& path, const json& body,
         const std::string& token = "") {
  const auto colon = endpoint.rfind(':');
  auto connection =
      HttpConnection::open(endpoint.substr(0, colon), std::stoi(endpoint.substr(colon + 1)),
                           std::chrono::steady_clock::now() + 5s);
  if (!connection) return nullptr;
  connection->set_authorization(token);
  auto answer = connection->post(path, body.dump(), std::chrono::steady_clock::now() + 5s);
  if (!answer) return nullptr;
  return json::parse(answer->body, nullptr, false);
}

TEST(EtcdTokenTest, AnExpiredTokenIsFetchedAgainAndTheCallGoesOn) {
  EtcdServer etcd("token", {"--auth-token-ttl", "1"});
  ASSERT_TRUE(etcd.ready());
  const std::string& at = etcd.endpoint();
  ASSERT_FALSE(ask(at, "/v3/auth/user/add", {{"name", "root"}, {"password", "pw"}}).is_null());
  ASSERT_FALSE(ask(at, "/v3/auth/user/grant", {{"user", "root"}, {"role", "root"}}).is_null());
  ASSERT_FALSE(ask(at, "/v3/auth/enable", json::object()).is_null());

  Access access;
  access.user = "root";
  access.password = "pw";
  auto session = EtcdSession::start({{at}, "/t/token/", 30s, "", access}, 5s);
  ASSERT_TRUE(session.ok()) << session.error().message();
  EtcdRendezvous client(*session);
  ASSERT_TRUE(client.set("k", "v").ok());
  // A token taken at the same time, to show that the quiet time below outlives it.
  const json taken = ask(at, "/v3/auth/authenticate", {{"name", "root"}, {"password", "pw"}});
  ASSERT_TRUE(taken.is_object() && taken.contains("token")) << taken.dump();
  const std::string token = taken["token"].get<std::string>();
  const json range = {{"key", to_base64("/t/token/")}};
  const json answered = ask(at, "/v3/kv/range", range, token);
  ASSERT_TRUE(answered.contains("header")) << answered.dump();  // let in

  std::this_thread::sleep_for(3s);  // no request: both tokens end
  const json refused = ask(at, "/v3/kv/range", range, token);
  EXPECT_EQ(refused.value("code", 0), 16) << refused.dump();  // gRPC's UNAUTHENTICATED

  auto value = client.get("k", 0ms);
  ASSERT_TRUE(value.ok()) << value.error().message();
  ASSERT_TRUE(value->has_value());
  EXPECT_EQ(**value, "v");
}

}  // namespace
}  // namespace aml::etcd

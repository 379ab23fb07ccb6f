// The fixture of the etcd rendezvous' tests (etcd_rendezvous_test.cpp, its waits in
// etcd_rendezvous_waits_test.cpp): a real etcd (Debian's etcd-server) started once for the
// suite on loopback ports of its own, and a launcher's session under each test's own prefix.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "etcd/etcd_session.hpp"
#include "etcd/http_connection.hpp"
#include "etcd_server.hpp"

namespace aml::etcd {

using namespace std::chrono_literals;

class EtcdRendezvousTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<EtcdServer>("rendezvous"); }
  static void TearDownTestSuite() { server_.reset(); }

  // The transport under test: etcd's gRPC API, or its JSON gateway where
  // AML_TEST_ETCD_TRANSPORT=gateway (CTest runs these tests both ways).
  static Access transport() {
    Access access;
    const char* chosen = std::getenv("AML_TEST_ETCD_TRANSPORT");
    access.transport =
        chosen && std::string(chosen) == "gateway" ? Transport::gateway : Transport::grpc;
    return access;
  }

  // A launcher's session under this test's own prefix.
  static std::shared_ptr<EtcdSession> session(std::chrono::milliseconds ttl = 5s) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    auto started = EtcdSession::start(
        {{server_->endpoint()}, std::string("/t/") + test->name() + "/", ttl, "", transport()}, 5s);
    EXPECT_TRUE(started.ok()) << (started.ok() ? "" : started.error().message());
    if (!started.ok()) return nullptr;
    EXPECT_EQ((*started)->transport(),
              transport().transport == Transport::grpc ? "gRPC" : "the JSON gateway");
    return *started;
  }

  // A plain HTTP connection to the server (its gateway and /metrics).
  static Result<HttpConnection> gateway() {
    const auto colon = server_->endpoint().rfind(':');
    return HttpConnection::open(server_->endpoint().substr(0, colon),
                                std::atoi(server_->endpoint().c_str() + colon + 1),
                                std::chrono::steady_clock::now() + 5s, nullptr);
  }

  // Watch streams etcd has started so far (its /metrics): how many watches a wait cost.
  static long long watch_streams_started() {
    auto metrics = gateway();
    if (!metrics.ok()) return -1;
    auto answer = metrics->post("/metrics", "{}", std::chrono::steady_clock::now() + 5s);
    if (!answer.ok()) return -1;
    const std::string line =
        "grpc_server_started_total{grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\","
        "grpc_type=\"bidi_stream\"} ";
    const auto at = answer->body.find(line);
    return at == std::string::npos ? -1 : std::atoll(answer->body.c_str() + at + line.size());
  }

  // Has etcd compact its history up to now (as a cluster with auto-compaction does): a
  // watch from an older revision is then canceled. False where it could not.
  static bool compact_now(EtcdSession& any) {
    auto now = any.call("/v3/kv/range", {{"key", "eA=="}}, std::chrono::steady_clock::now() + 5s);
    if (!now.ok()) return false;
    const std::string revision =
        now->value("header", nlohmann::json::object()).value("revision", "0");
    auto http = gateway();
    if (!http.ok()) return false;
    auto compacted = http->post("/v3/kv/compaction", "{\"revision\":\"" + revision + "\"}",
                                std::chrono::steady_clock::now() + 5s);
    return compacted.ok() && compacted->status == 200;
  }

  static inline std::unique_ptr<EtcdServer> server_;
};

}  // namespace aml::etcd

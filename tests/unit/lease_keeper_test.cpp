// A launcher's lease, kept by its own thread (src/etcd/lease_keeper.hpp), against a real etcd:
// a main loop busy past the TTL keeps its lease; an ended lease is the launcher's loss as soon
// as the keeper hears it; the keeper's stop cuts short a call to a member that never answers.
#include "etcd/lease_keeper.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "etcd/etcd_rendezvous.hpp"
#include "etcd_rendezvous_fixture.hpp"

namespace aml::etcd {
namespace {

using Clock = std::chrono::steady_clock;

class LeaseKeeperTest : public EtcdRendezvousTest {
 protected:
  // What etcd says is left of the lease, asked through its gateway (-1: gone; -2: no answer).
  static long long ttl_left(const std::string& lease) {
    auto http = gateway();
    if (!http.ok()) return -2;
    auto answer =
        http->post("/v3/lease/timetolive", nlohmann::json{{"ID", lease}}.dump(), Clock::now() + 5s);
    if (!answer.ok()) return -2;
    auto parsed = nlohmann::json::parse(answer->body, nullptr, false);
    return parsed.is_object() ? std::atoll(parsed.value("TTL", std::string("-1")).c_str()) : -2;
  }
};

// The main loop makes no call for 2.5 TTLs (a restart's workers slow to leave): its lease holds.
TEST_F(LeaseKeeperTest, ALeaseOutlivesAMainLoopBusyForLongerThanItsTtl) {
  auto mine = session(2s);
  ASSERT_TRUE(mine);
  EtcdRendezvous client(mine);
  std::this_thread::sleep_for(5s);
  EXPECT_GT(ttl_left(mine->lease()), 0) << "the lease ended while its launcher lived";
  auto beat = client.heartbeat();
  ASSERT_TRUE(beat.ok()) << beat.error().message();
  EXPECT_TRUE(*beat) << "etcd answered the keeper meanwhile";
}

// Another member's view: the lease is gone (as after a pause past its TTL). The keeper's next
// renewal hears it, and the next beat is this launcher's loss, not an answer.
TEST_F(LeaseKeeperTest, AnEndedLeaseIsHeardByTheKeeperAndIsTheLaunchersLoss) {
  auto mine = session(2s);
  ASSERT_TRUE(mine);
  EtcdRendezvous client(mine);
  ASSERT_TRUE(mine->call("/v3/lease/revoke", {{"ID", mine->lease()}}, Clock::now() + 2s).ok());
  Result<bool> beat = true;
  for (auto until = Clock::now() + 5s; beat.ok() && Clock::now() < until;) {
    std::this_thread::sleep_for(50ms);
    beat = client.heartbeat();
  }
  ASSERT_FALSE(beat.ok()) << "no renewal within 5 s of a 2 s TTL";
  EXPECT_NE(beat.error().message().find("expired"), std::string::npos) << beat.error().message();
}

// A member that takes the connection and never answers: the keeper's call would wait out the
// TTL on it; its stop cuts the call short.
TEST_F(LeaseKeeperTest, TheStopCutsShortACallThatNoMemberAnswers) {
  UniqueFd silent(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  ASSERT_EQ(bind(silent.get(), reinterpret_cast<sockaddr*>(&address), size), 0);
  ASSERT_EQ(listen(silent.get(), 8), 0);
  ASSERT_EQ(getsockname(silent.get(), reinterpret_cast<sockaddr*>(&address), &size), 0);
  const std::string endpoint = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  MemberCalls calls({endpoint}, transport(), nullptr, transport().transport == Transport::grpc, 0,
                    2000ms);
  auto keeper = std::make_unique<LeaseKeeper>(std::move(calls), "1", 6s);
  std::this_thread::sleep_for(2500ms);  // its first renewal (at 2 s) waits on the silent member
  EXPECT_FALSE(keeper->ended().has_value()) << "still within the TTL";
  const auto asked = Clock::now();
  keeper.reset();
  EXPECT_LT(Clock::now() - asked, 1s) << "the stop waited for the call";
}

}  // namespace
}  // namespace aml::etcd

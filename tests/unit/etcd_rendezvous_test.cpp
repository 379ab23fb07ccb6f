// The etcd rendezvous (src/etcd) against a real etcd (Debian's etcd-server), started by the test
// on loopback ports of its own: each operation the node group uses, the lease as liveness and
// last will, a member that is not there, and something that is not etcd answering.
#include "etcd/etcd_rendezvous.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "etcd/http_connection.hpp"
#include "etcd_rendezvous_fixture.hpp"
#include "net/free_port.hpp"

namespace aml::etcd {
namespace {

TEST_F(EtcdRendezvousTest, SetGetAndAnAbsentKeyWithItsTimeout) {
  EtcdRendezvous client(session());
  ASSERT_TRUE(client.set("k", std::string("v\0w", 3)).ok());
  auto got = client.get("k", 0ms);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(**got, std::string("v\0w", 3));  // bytes, not text
  const auto before = std::chrono::steady_clock::now();
  auto absent = client.get("nothing", 300ms);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - before, 290ms);
  EXPECT_TRUE(*client.erase("k"));
  EXPECT_FALSE(client.get("k", 0ms)->has_value());
}

TEST_F(EtcdRendezvousTest, AGetWaitsForThePutOfAnotherLauncher) {
  EtcdRendezvous waiter(session());
  std::thread other([] {
    std::this_thread::sleep_for(200ms);
    EtcdRendezvous setter(session());
    (void)setter.set("late", "here");
  });
  auto got = waiter.get("late", 5s);
  other.join();
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(got->value_or("none"), "here");
}

TEST_F(EtcdRendezvousTest, AddGivesEveryCallerANumberOfItsOwn) {
  std::set<std::int64_t> numbers;
  std::mutex lock;
  std::vector<std::thread> adders;
  for (int t = 0; t < 3; ++t) {
    adders.emplace_back([&] {
      EtcdRendezvous client(session());
      for (int i = 0; i < 30; ++i) {
        auto n = client.add("count", 1);
        std::lock_guard<std::mutex> hold(lock);
        if (n.ok()) numbers.insert(*n);
      }
    });
  }
  for (auto& t : adders) t.join();
  EXPECT_EQ(numbers.size(), 90u);
  EXPECT_EQ(*numbers.begin(), 1);
  EXPECT_EQ(*numbers.rbegin(), 90);
  EtcdRendezvous reader(session());
  EXPECT_EQ(*reader.add("count", 0), 90);
  EXPECT_EQ(*reader.add("never", 0), 0);
  EXPECT_FALSE(reader.add("count", 5).ok());  // only steps of 0 and 1
}

// A coordinator's wait for arrivals: the count as soon as it passes the one asked for, the
// count as it is after the timeout, and every arrival seen through the same watch.
TEST_F(EtcdRendezvousTest, WaitCountWakesAtEachArrivalAndGivesTheCountAtItsTimeout) {
  EtcdRendezvous coordinator(session());
  auto none = coordinator.wait_count("arrivals", 0, "", 300ms);
  ASSERT_TRUE(none.ok()) << none.error().message();
  EXPECT_EQ(*none, 0);
  std::thread arrivals([] {
    EtcdRendezvous client(session());
    for (int i = 0; i < 5; ++i) {
      std::this_thread::sleep_for(100ms);
      (void)client.add("arrivals", 1);
    }
  });
  std::int64_t seen = 0;
  const auto before = std::chrono::steady_clock::now();
  while (seen < 5 && std::chrono::steady_clock::now() - before < 10s) {
    auto count = coordinator.wait_count("arrivals", seen, "", 5s);
    ASSERT_TRUE(count.ok()) << count.error().message();
    EXPECT_GT(*count, seen);
    seen = *count;
  }
  arrivals.join();
  EXPECT_EQ(seen, 5);
  EXPECT_EQ(*coordinator.wait_count("arrivals", 5, "", 200ms), 5);  // no more: the timeout
  EXPECT_EQ(*coordinator.wait_count("arrivals", 2, "", 0ms), 5);    // already above: at once
}

TEST_F(EtcdRendezvousTest, CompareSetKeepsTheFirstVerdict) {
  EtcdRendezvous client(session());
  EXPECT_EQ(*client.compare_set("abort", "", "first"), "first");
  EXPECT_EQ(*client.compare_set("abort", "", "second"), "first");
  EXPECT_EQ(*client.compare_set("abort", "wrong", "third"), "first");
  EXPECT_EQ(*client.compare_set("abort", "first", "fourth"), "fourth");
}

TEST_F(EtcdRendezvousTest, AClaimGoesWithItsLaunchersLease) {
  auto holder = std::make_unique<EtcdRendezvous>(session());
  EtcdRendezvous other(session());
  EXPECT_EQ(*holder->claim("coordinator", "a"), "a");
  EXPECT_EQ(*other.claim("coordinator", "b"), "a");
  holder.reset();  // its session revokes the lease on a clean exit
  EXPECT_EQ(*other.claim("coordinator", "b"), "b");
}

TEST_F(EtcdRendezvousTest, ALastWillIsSetByTheOthersWhenItsLeaseEnds) {
  EtcdRendezvous survivor(session());
  ASSERT_TRUE(survivor.watch_wills(true).ok());
  {
    EtcdRendezvous dying(session());
    ASSERT_TRUE(dying.set_last_will("abort", "died").ok());
    EtcdRendezvous finishing(session());
    ASSERT_TRUE(finishing.set_last_will("cleared-key", "died").ok());
    ASSERT_TRUE(finishing.clear_last_will().ok());
  }  // both leases revoked
  auto fired = survivor.get("abort", 5s);
  ASSERT_TRUE(fired.ok()) << fired.error().message();
  EXPECT_EQ(fired->value_or("none"), "died");
  auto cleared = survivor.get("cleared-key", 500ms);
  ASSERT_TRUE(cleared.ok());
  EXPECT_FALSE(cleared->has_value());
}

// A launcher's "gone" key is a lasting will: the round's will (its abort) set, replaced or
// taken back beside it leaves it standing; leaving on purpose takes both back.
TEST_F(EtcdRendezvousTest, ALastingWillStandsBesideTheConnectionsWill) {
  EtcdRendezvous survivor(session());
  ASSERT_TRUE(survivor.watch_wills(true).ok());
  {
    EtcdRendezvous dying(session());
    ASSERT_TRUE(dying.batch({BatchOp::lasting_will("gone", "1")}).ok());
    ASSERT_TRUE(dying.batch({BatchOp::will("replaced-abort", "died")}).ok());
    ASSERT_TRUE(dying.set_last_will("abort", "died").ok());
    ASSERT_TRUE(dying.clear_last_will().ok());
    EtcdRendezvous leaving(session());
    ASSERT_TRUE(
        leaving
            .batch({BatchOp::lasting_will("left-gone", "1"), BatchOp::will("left-abort", "died")})
            .ok());
    ASSERT_TRUE(leaving.clear_lasting_will().ok());
  }  // both leases revoked
  auto fired = survivor.get("gone", 5s);
  ASSERT_TRUE(fired.ok()) << fired.error().message();
  EXPECT_EQ(fired->value_or("none"), "1");
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(survivor.heartbeat().ok());  // fires whatever else ended
  for (const char* key : {"replaced-abort", "abort", "left-gone", "left-abort"}) {
    auto absent = survivor.get(key, 0ms);
    ASSERT_TRUE(absent.ok()) << absent.error().message();
    EXPECT_FALSE(absent->has_value()) << key;
  }
}

// Only the launchers that watch the wills set them (a few of a job's: each will put is an
// event for every watcher); one that starts watching sets those that end from then on.
TEST_F(EtcdRendezvousTest, OnlyALauncherWatchingTheWillsSetsThem) {
  EtcdRendezvous bystander(session());
  {
    EtcdRendezvous dying(session());
    ASSERT_TRUE(dying.set_last_will("unwatched", "died").ok());
  }
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(bystander.heartbeat().ok());  // a launcher tends its lease (and the wills it watches)
  EXPECT_FALSE(bystander.get("unwatched", 0ms)->has_value());
  ASSERT_TRUE(bystander.watch_wills(true).ok());
  {
    EtcdRendezvous dying(session());
    ASSERT_TRUE(dying.set_last_will("watched", "died").ok());
  }
  auto fired = bystander.get("watched", 5s);
  ASSERT_TRUE(fired.ok()) << fired.error().message();
  EXPECT_EQ(fired->value_or("none"), "died");
  ASSERT_TRUE(bystander.watch_wills(false).ok());
  {
    EtcdRendezvous dying(session());
    ASSERT_TRUE(dying.set_last_will("no-longer-watched", "died").ok());
  }
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(bystander.heartbeat().ok());
  EXPECT_FALSE(bystander.get("no-longer-watched", 0ms)->has_value());
}

// A lease that ended while nobody watched the wills left no word; it is found by counting the
// keys it holds (the launchers waiting on it then set its will: node_group_gone.cpp). More
// launchers than one transaction holds are asked in several.
TEST_F(EtcdRendezvousTest, ALeaseThatEndedUnwatchedIsFoundLapsed) {
  EtcdRendezvous bystander(session());
  ASSERT_TRUE(bystander.batch({BatchOp::lasting_will("gone/alive", "1")}).ok());
  long ended = 0;
  {
    EtcdRendezvous dying(session());
    ASSERT_TRUE(dying.batch({BatchOp::lasting_will("gone/ended", "1")}).ok());
    ended = *dying.own_number();
  }  // its lease revoked, no watcher
  ASSERT_TRUE(bystander.heartbeat().ok());
  EXPECT_FALSE(bystander.get("gone/ended", 0ms)->has_value());  // nobody set its will
  const long alive = *bystander.own_number();
  std::vector<long> asked = {alive, ended};
  std::vector<long> expected = {ended};
  for (long never = 1; never <= 200; ++never) {  // leases this etcd never granted
    asked.push_back(never);
    expected.push_back(never);
  }
  auto lapsed = bystander.lapsed(asked);
  ASSERT_TRUE(lapsed.ok()) << lapsed.error().message();
  EXPECT_EQ(*lapsed, expected);
}

TEST_F(EtcdRendezvousTest, ABatchIsOneTransactionOfIndependentOperations) {
  EtcdRendezvous survivor(session());
  ASSERT_TRUE(survivor.watch_wills(true).ok());
  ASSERT_TRUE(survivor.set("there", "value").ok());
  ASSERT_TRUE(survivor.add("count", 1).ok());
  {
    EtcdRendezvous waiting(session());
    auto done = waiting.batch({BatchOp::get_now("there"), BatchOp::get_now("absent"),
                               BatchOp::add_one("count"), BatchOp::set_to("slot", "mine"),
                               BatchOp::will("gone", "died")});
    ASSERT_TRUE(done.ok()) << done.error().message();
    ASSERT_EQ(done->size(), 5u);
    EXPECT_EQ((*done)[0].value_or("none"), "value");
    EXPECT_FALSE((*done)[1].has_value());
    EXPECT_EQ((*done)[2].value_or("none"), "2");  // its own number, after the first
    EXPECT_FALSE((*done)[3].has_value());
    EXPECT_EQ(survivor.get("slot", 0ms)->value_or("none"), "mine");
    EXPECT_EQ(*survivor.add("count", 0), 2);
    EXPECT_FALSE(survivor.get("gone", 0ms)->has_value());  // a will, not a put
    // One key twice in a transaction is etcd's refusal, named, not a half-done batch.
    auto twice = waiting.batch({BatchOp::set_to("dup", "1"), BatchOp::set_to("dup", "2")});
    ASSERT_FALSE(twice.ok());
    EXPECT_NE(twice.error().message().find("duplicate key"), std::string::npos)
        << twice.error().message();
    EXPECT_FALSE(survivor.get("dup", 0ms)->has_value());
  }  // its lease revoked: the will the batch set fires
  auto fired = survivor.get("gone", 5s);
  ASSERT_TRUE(fired.ok()) << fired.error().message();
  EXPECT_EQ(fired->value_or("none"), "died");
}

// A value past HTTP/2's first window (64 KiB) each way: a round's seats record at thousands of
// nodes is one.
TEST_F(EtcdRendezvousTest, AValueLargerThanAWindowGoesAndComesBackWhole) {
  EtcdRendezvous launcher(session());
  std::string seats;
  for (int rank = 0; seats.size() < 300000; ++rank) seats += std::to_string(rank) + " host-x ";
  ASSERT_TRUE(launcher.set("seats", seats).ok());
  auto back = launcher.get("seats", 0ms);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->value_or("").size(), seats.size());
  EXPECT_TRUE(back->value_or("") == seats);
}

TEST_F(EtcdRendezvousTest, AnExpiredLeaseIsThisLaunchersLossNotAnAnswer) {
  auto mine = session(2s);
  EtcdRendezvous client(mine);
  // Another member of the cluster's view: the lease ended (as after a pause past its TTL).
  ASSERT_TRUE(
      mine->call("/v3/lease/revoke", {{"ID", mine->lease()}}, std::chrono::steady_clock::now() + 2s)
          .ok());
  std::this_thread::sleep_for(800ms);  // past a third of the TTL: the next beat renews
  auto beat = client.heartbeat();
  ASSERT_FALSE(beat.ok());
  EXPECT_NE(beat.error().message().find("expired"), std::string::npos) << beat.error().message();
}

TEST_F(EtcdRendezvousTest, AMemberThatIsNotThereIsPassedOver) {
  auto started = EtcdSession::start(
      {{"127.0.0.1:1", server_->endpoint()}, "/t/passed/", 5s, "", transport()}, 5s);
  ASSERT_TRUE(started.ok()) << started.error().message();
  EtcdRendezvous client(*started);
  EXPECT_TRUE(client.set("k", "v").ok());
}

TEST_F(EtcdRendezvousTest, NoMemberAnsweringIsAnErrorNamingThemAll) {
  auto started =
      EtcdSession::start({{"127.0.0.1:1", "127.0.0.1:2"}, "/t/none/", 5s, "", transport()}, 500ms);
  ASSERT_FALSE(started.ok());
  const std::string message = started.error().message();
  EXPECT_NE(message.find("127.0.0.1:1,127.0.0.1:2"), std::string::npos) << message;
}

// Something else at the endpoint (a web server, a wrong port) answers: an error that says so
// within the time given, whatever it sends.
TEST_F(EtcdRendezvousTest, SomethingThatIsNotEtcdIsNamedAndNotWaitedOn) {
  for (const std::string& answer :
       {std::string("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
        std::string("SSH-2.0-OpenSSH_9.2\r\n"),
        std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\nxx"),
        std::string("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n{}"),
        std::string(70000, 'A')}) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socklen_t size = sizeof(address);
    getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
    listen(listener, 8);
    std::atomic<bool> done{false};
    std::thread server([&] {
      while (!done) {
        pollfd p{listener, POLLIN, 0};
        if (poll(&p, 1, 50) != 1) continue;
        int client = accept(listener, nullptr, nullptr);
        char buffer[4096];
        (void)!recv(client, buffer, sizeof(buffer), 0);
        (void)!send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
        std::this_thread::sleep_for(100ms);
        close(client);
      }
    });
    const std::string where = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
    const auto before = std::chrono::steady_clock::now();
    auto started = EtcdSession::start({{where}, "/t/", 5s, "", transport()}, 1500ms);
    done = true;
    server.join();
    close(listener);
    EXPECT_FALSE(started.ok()) << answer.substr(0, 20);
    EXPECT_LT(std::chrono::steady_clock::now() - before, 4s);
    if (!started.ok()) {
      EXPECT_NE(started.error().message().find(where), std::string::npos)
          << started.error().message();
    }
  }
}

}  // namespace
}  // namespace aml::etcd

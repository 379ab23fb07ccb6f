// The store server and client over real loopback sockets; the server runs in a thread here.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <aml/store.hpp>
#include <atomic>
#include <thread>

#include "store_fixture.hpp"

namespace aml {
namespace {

class StoreTest : public StoreServerFixture {};

TEST_F(StoreTest, SetGetAddCheckEraseCompareSet) {
  StoreClient c = client();
  ASSERT_TRUE(c.set("a", "1").ok());
  EXPECT_EQ(**c.get("a", 1s), "1");
  EXPECT_EQ(*c.add("count", 5), 5);
  EXPECT_EQ(*c.add("count", -2), 3);
  EXPECT_EQ(**c.get("count", 1s), "3");
  EXPECT_TRUE(*c.check({"a", "count"}));
  EXPECT_FALSE(*c.check({"a", "missing"}));
  EXPECT_TRUE(*c.erase("a"));
  EXPECT_FALSE(*c.erase("a"));
  EXPECT_EQ(*c.compare_set("cas", "", "first"), "first");       // absent + "" expected: stored
  EXPECT_EQ(*c.compare_set("cas", "nope", "second"), "first");  // mismatch: unchanged
  EXPECT_EQ(*c.compare_set("cas", "first", "second"), "second");
}

TEST_F(StoreTest, ALastWillIsSetWhenItsConnectionClosesAndWakesWaiters) {
  StoreClient watcher = client();
  std::optional<std::string> heard;
  std::thread t([&] { heard = *watcher.get("abort", 5s); });
  {
    StoreClient dying = client();
    ASSERT_TRUE(dying.set_last_will("abort", "node 3 died").ok());
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(*dying.check({"abort"}));  // nothing yet while it lives
  }                                         // closed without clearing it: as when its process dies
  t.join();
  EXPECT_EQ(heard, "node 3 died");
}

TEST_F(StoreTest, ALastWillNeverOverwritesAndCanBeCleared) {
  StoreClient c = client();
  {
    StoreClient first = client();
    ASSERT_TRUE(first.set("abort", "the real failure").ok());
    StoreClient late = client();
    ASSERT_TRUE(late.set_last_will("abort", "node 2 died").ok());
    StoreClient leaving = client();
    ASSERT_TRUE(leaving.set_last_will("gone", "node 1 died").ok());
    ASSERT_TRUE(leaving.set_last_will("gone-2", "replaced").ok());  // one will a connection
    ASSERT_TRUE(leaving.clear_last_will().ok());                    // leaving on purpose
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(**c.get("abort", 1s), "the real failure");
  EXPECT_FALSE(*c.check({"gone"}));
  EXPECT_FALSE(*c.check({"gone-2"}));
}

TEST_F(StoreTest, AddOnANonNumberIsAnErrorAndTheConnectionGoesOn) {
  StoreClient c = client();
  ASSERT_TRUE(c.set("word", "hello").ok());
  auto added = c.add("word", 1);
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.error().message().find("not a number"), std::string::npos);
  EXPECT_TRUE(c.set("still", "works").ok());
}

TEST_F(StoreTest, BlockingGetIsWokenBySetFromAnotherClient) {
  StoreClient waiter = client();
  std::optional<std::string> got;
  std::thread t([&] { got = *waiter.get("late", 5s); });
  std::this_thread::sleep_for(100ms);
  StoreClient setter = client();
  ASSERT_TRUE(setter.set("late", "value").ok());
  t.join();
  EXPECT_EQ(got, "value");
}

TEST_F(StoreTest, WaitOnSeveralKeysAndTimeouts) {
  StoreClient c = client();
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(*c.wait({"x", "y"}, 150ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 140ms);
  EXPECT_FALSE(c.get("x", 50ms)->has_value());
  EXPECT_FALSE(c.get("x", 0ms)->has_value());  // no wait at all
  StoreClient other = client();
  std::thread t([&] {
    std::this_thread::sleep_for(50ms);
    (void)other.set("x", "1");
    std::this_thread::sleep_for(50ms);
    (void)other.add("y", 1);
  });
  EXPECT_TRUE(*c.wait({"x", "y"}, 5s));
  t.join();
}

// A wait counts its keys down as they come and looks at them all only at the end: a key that
// came and was erased again before the last one is waited for again, and a key named twice
// is one key.
TEST_F(StoreTest, AWaitEndsOnlyWithEveryKeyThereAtOnce) {
  StoreClient waiter = client();
  StoreClient other = client();
  std::atomic<int> ended{0};
  std::thread t([&] {
    auto all = waiter.wait({"a", "b", "a", "c"}, 10s);
    ended = all.ok() && *all ? 1 : -1;
  });
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(other.set("a", "1").ok());
  ASSERT_TRUE(other.set("b", "1").ok());
  ASSERT_TRUE(other.erase("a").ok());
  ASSERT_TRUE(other.set("c", "1").ok());  // the last of the three came, "a" is gone again
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(ended.load(), 0);
  ASSERT_TRUE(other.set("a", "2").ok());
  t.join();
  EXPECT_EQ(ended.load(), 1);
  stop();
  EXPECT_EQ(server_->pending_wait_entries(), 0u);
}

TEST_F(StoreTest, GetAllWaitsForEveryKeyInOneCall) {
  StoreClient c = client();
  ASSERT_TRUE(c.set("node/0", "zero").ok());
  auto partial = c.get_all({"node/0", "node/1"}, 100ms);  // timed out: what there is
  ASSERT_TRUE(partial.ok()) << partial.error().message();
  ASSERT_EQ(partial->size(), 2u);
  EXPECT_EQ((*partial)[0], "zero");
  EXPECT_FALSE((*partial)[1].has_value());
  StoreClient other = client();
  std::thread t([&] {
    std::this_thread::sleep_for(100ms);
    (void)other.set("node/1", "one");
  });
  auto all = c.get_all({"node/0", "node/1"}, 5s);
  t.join();
  ASSERT_TRUE(all.ok()) << all.error().message();
  EXPECT_EQ((*all)[0], "zero");
  EXPECT_EQ((*all)[1], "one");
  EXPECT_EQ(server_->pending_wait_entries(), 0u);
}

TEST_F(StoreTest, SilentNamesTheIdentifiedConnectionsThatSentNothing) {
  StoreClient observer = client();
  StoreClient beating = client();
  StoreClient quiet = client();
  StoreClient anonymous = client();  // not identified: never named
  ASSERT_TRUE(beating.identify("1").ok());
  ASSERT_TRUE(quiet.identify("2").ok());
  EXPECT_TRUE(observer.silent(200ms)->empty());  // everybody spoke just now
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(beating.check({"x"}).ok());  // any request counts
  }
  auto silent = observer.silent(200ms);
  ASSERT_TRUE(silent.ok()) << silent.error().message();
  EXPECT_EQ(*silent, std::vector<std::string>{"2"});
  { StoreClient gone = std::move(quiet); }  // closed: no longer silent, gone (its will says so)
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(observer.silent(200ms)->empty());
}

// identify() and heartbeat(), the public client's liveness without a question to answer.
TEST_F(StoreTest, AHeartbeatKeepsAnIdentifiedConnectionFromBeingSilent) {
  StoreClient observer = client();
  StoreClient beating = client();
  ASSERT_TRUE(beating.identify("1").ok());
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(beating.heartbeat().ok());
  }
  EXPECT_TRUE(observer.silent(200ms)->empty());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(*observer.silent(200ms), std::vector<std::string>{"1"});
}

// clock_ns(): the store's host's wall clock, bracketed by the client's (--straggler-check's
// offsets); the connection goes on after it.
TEST_F(StoreTest, TheClockIsTheHostsWallClock) {
  StoreClient c = client();
  const auto wall = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const std::int64_t before = wall();
  auto theirs = c.clock_ns();
  const std::int64_t after = wall();
  ASSERT_TRUE(theirs.ok()) << theirs.error().message();
  EXPECT_GE(*theirs, before);
  EXPECT_LE(*theirs, after);
  ASSERT_TRUE(c.set("after", "1").ok());
  EXPECT_EQ(**c.get("after", 1s), "1");
}

// A launcher's watch is its sign of life: it waits, is answered at the wait's timeout, and asks
// again at once. Waiting is not silence; silence counts from the answer, not from the question.
TEST_F(StoreTest, AWatchIsSilentFromItsAnswerOnNotFromItsQuestion) {
  StoreClient observer = client();
  StoreClient watch = client();
  ASSERT_TRUE(watch.identify("1").ok());
  ASSERT_TRUE(watch.start_get("abort", 400ms).ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(observer.silent(200ms)->empty());  // asked 300 ms ago, and waits: alive
  auto answered = watch.finish_get();            // the timeout's answer, about 400 ms in
  ASSERT_TRUE(answered.ok()) << answered.error().message();
  EXPECT_FALSE(answered->has_value());
  std::this_thread::sleep_for(100ms);
  // 500 ms since it asked, 100 ms since it was answered: not silent for 200 ms yet.
  EXPECT_TRUE(observer.silent(200ms)->empty());
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(*observer.silent(200ms), std::vector<std::string>{"1"});  // it did not ask again
  ASSERT_TRUE(watch.start_get("abort", 400ms).ok());
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(observer.silent(200ms)->empty());
}

TEST_F(StoreTest, AClientWithoutAReplyTimeoutWaitsForEverAfterItsHandshake) {
  // The handshake has a deadline of its own; none of it may stay on the socket.
  StoreClient c = client();
  timeval timeout{1, 1};
  socklen_t length = sizeof(timeout);
  ASSERT_EQ(getsockopt(c.fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout, &length), 0);
  EXPECT_EQ(timeout.tv_sec, 0);
  EXPECT_EQ(timeout.tv_usec, 0);
}

TEST_F(StoreTest, WrongTokenIsRefused) {
  auto c = StoreClient::connect("127.0.0.1", server_->port(), "not-the-token", 1s);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("another job's run id"), std::string::npos)
      << c.error().message();
}

TEST_F(StoreTest, GarbageAndHugeLengthsAreDroppedWithoutDisturbingOthers) {
  StoreClient good = client();
  int garbage = raw();
  ASSERT_EQ(send(garbage, "GET / HTTP/1.1\r\n\r\n", 18, 0), 18);
  EXPECT_TRUE(closed_by_server(garbage, 2s));
  close(garbage);
  int huge = raw();
  ASSERT_EQ(send(huge, "\xff\xff\xff\x7f", 4, 0), 4);
  EXPECT_TRUE(closed_by_server(huge, 2s));
  close(huge);
  EXPECT_TRUE(good.set("k", "v").ok());
  EXPECT_EQ(**good.get("k", 1s), "v");
}

TEST_F(StoreTest, StalledClientsAreDroppedAndOthersServedMeanwhile) {
  store::ServerOptions options;
  options.stall_timeout = 300ms;
  options.handshake_timeout = 300ms;
  restart(options);
  int stalled = raw();
  ASSERT_EQ(send(stalled, "\x10\x00\x00\x00\x01", 5, 0), 5);  // 16-byte frame, 1 byte sent
  int silent = raw();                                         // never says HELLO
  StoreClient good = client();
  EXPECT_TRUE(good.set("during", "stall").ok());  // served while the others stall
  EXPECT_TRUE(closed_by_server(stalled, 3s));
  EXPECT_TRUE(closed_by_server(silent, 3s));
  close(stalled);
  close(silent);
  EXPECT_EQ(**good.get("during", 1s), "stall");
}

TEST_F(StoreTest, LimitsOnKeysAndValues) {
  store::ServerOptions options;
  options.limits.max_keys = 2;
  options.limits.max_value = 8;
  restart(options);
  StoreClient c = client();
  EXPECT_TRUE(c.set("one", "1").ok());
  EXPECT_TRUE(c.set("two", "2").ok());
  auto third = c.set("three", "3");
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.error().message().find("maximum number of keys"), std::string::npos);
  EXPECT_TRUE(c.set("one", "replaced").ok());  // an existing key may change
  StoreClient other = client();
  EXPECT_FALSE(other.set("one", "far too long a value").ok());  // over max_value: dropped
}

TEST_F(StoreTest, ConnectionsOverTheLimitAreRefused) {
  store::ServerOptions options;
  options.max_connections = 1;
  restart(options);
  StoreClient first = client();
  auto second = StoreClient::connect("127.0.0.1", server_->port(), "job-token", 1s);
  EXPECT_FALSE(second.ok());
  EXPECT_TRUE(first.set("first", "still served").ok());
}

TEST_F(StoreTest, EndedWaitsLeaveNothingBehind) {
  StoreClient poller = client();
  for (int i = 0; i < 200; ++i) {
    auto got = poller.get("never", 1ms);
    ASSERT_TRUE(got.ok());
    EXPECT_FALSE(*got);
  }
  {
    StoreClient quitter = client();
    ASSERT_TRUE(quitter.start_get("never-either", 60s).ok());
    std::this_thread::sleep_for(50ms);
  }  // goes away in the middle of its wait
  ASSERT_TRUE(poller.set("done", "1").ok());
  std::this_thread::sleep_for(50ms);
  stop();  // the server's own thread is the only one that may look inside
  EXPECT_EQ(server_->pending_wait_entries(), 0u);
}

TEST_F(StoreTest, AsyncGetAnswersOnItsDescriptor) {
  StoreClient watcher = client();
  ASSERT_TRUE(watcher.start_get("abort", 60s).ok());
  ASSERT_TRUE(client().set("abort", "rank 5 failed").ok());
  pollfd ready{watcher.fd(), POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, 2000), 1);
  auto heard = watcher.finish_get();
  ASSERT_TRUE(heard.ok()) << heard.error().message();
  ASSERT_TRUE(*heard);
  EXPECT_EQ(**heard, "rank 5 failed");
}

TEST_F(StoreTest, ReplyTimeoutTurnsSilenceIntoAnError) {
  StoreClient c = client();
  c.set_reply_timeout(200ms);
  stop();  // nobody answers any more
  auto started = std::chrono::steady_clock::now();
  auto added = c.add("beat", 1);
  EXPECT_FALSE(added.ok());
  EXPECT_NE(added.error().message().find("no answer"), std::string::npos)
      << added.error().message();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

// A reply that came too late is never read as the next call's own: the connection closes at
// the timeout (a spare cut off from node 0's store read a stale reply, and left the job).
TEST_F(StoreTest, AReplyTooLateClosesTheConnection) {
  StoreClient c = client();
  ASSERT_TRUE(c.set("seat", "spare").ok());
  c.set_reply_timeout(200ms);
  stop();  // node 0's store stops answering (this host cut off)
  EXPECT_FALSE(c.add("count", 1).ok());
  resume();  // and answers the add, late (healed)
  std::this_thread::sleep_for(100ms);
  auto seat = c.get("seat", 0ms);
  EXPECT_FALSE(seat.ok()) << "the get read " << (seat.ok() && *seat ? **seat : "nothing");
  EXPECT_EQ(c.fd(), -1);
  EXPECT_TRUE(client().check({"seat"}).ok());  // a new connection is served
}

TEST(StoreServerTest, RunStopsWhenAskedFromAnotherThread) {
  auto server = store::StoreServer::listen("127.0.0.1", 0, {});
  ASSERT_TRUE(server.ok());
  std::thread serving([&] { (*server)->run(); });
  std::this_thread::sleep_for(20ms);
  auto asked = std::chrono::steady_clock::now();
  (*server)->stop();
  serving.join();
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 500ms);
}

TEST(StoreClientTest, NoServerGivesAClearErrorAfterTheTimeout) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t length = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  close(fd);  // a port nobody listens on
  auto c = StoreClient::connect("127.0.0.1", ntohs(addr.sin_port), "t", 200ms);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("store=127.0.0.1:"), std::string::npos) << c.error().message();
}

}  // namespace
}  // namespace aml

// The etcd rendezvous' waits against a real etcd: a wait right after a batch misses nothing
// put between the two, a wait for many keys under one prefix, the one descriptor an event loop
// registers, and a key followed beside another on the same watch.
#include <poll.h>

#include <map>
#include <memory>

#include "etcd/etcd_rendezvous.hpp"
#include "etcd_rendezvous_fixture.hpp"

namespace aml::etcd {
namespace {

// How long a wake-up that must come is waited for, in ms. Generous: under the suite's load (the
// sanitizer build's tests beside a build and the fuzzers) etcd's first answer on a new watch
// took over 3 s once; a put that is lost never wakes the descriptor, however long the wait.
constexpr int kMustCome = 15000;

// A wait right after a batch that found its key absent watches from the batch's revision
// instead of reading it again: the puts between the two are not lost.
TEST_F(EtcdRendezvousTest, AWaitRightAfterABatchMissesNothingPutBetween) {
  EtcdRendezvous waiter(session());
  EtcdRendezvous setter(session());
  auto looked = waiter.batch({BatchOp::get_now("between")});
  ASSERT_TRUE(looked.ok()) << looked.error().message();
  EXPECT_FALSE(looked->front().has_value());
  ASSERT_TRUE(setter.set("between", "put").ok());
  ASSERT_TRUE(setter.set("between", "put again").ok());
  auto got = waiter.get("between", 2s);
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(got->value_or("none"), "put again");  // both puts came, in order
}

// A node's entry is created in its join's batch (the first one kept, as compare_set keeps
// it), and the batch's "absent" is good for a watch on another connection of the same
// launcher: a put between the batch and the watch is not lost.
TEST_F(EtcdRendezvousTest, ABatchCreatesWhereAbsentAndAnotherConnectionWatchesFromIt) {
  auto shared = session();
  EtcdRendezvous joining(shared);
  EtcdRendezvous watching(shared);
  EtcdRendezvous other(session());
  auto joined = joining.batch({BatchOp::create("node/3", "mine"), BatchOp::get_now("verdict")});
  ASSERT_TRUE(joined.ok()) << joined.error().message();
  EXPECT_EQ((*joined)[0].value_or("none"), "mine");
  EXPECT_FALSE((*joined)[1].has_value());
  auto late = other.batch({BatchOp::create("node/3", "theirs")});
  ASSERT_TRUE(late.ok()) << late.error().message();
  EXPECT_EQ(late->front().value_or("none"), "mine");  // the first entry stays
  ASSERT_TRUE(other.set("verdict", "agreed").ok());   // after the batch, before the watch
  ASSERT_TRUE(watching.start_get("verdict", 1s).ok());
  pollfd ready{watching.fd(), POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, kMustCome), 1);
  auto heard = watching.finish_get();
  ASSERT_TRUE(heard.ok()) << heard.error().message();
  EXPECT_EQ(heard->value_or("none"), "agreed");
}

TEST_F(EtcdRendezvousTest, GetAllWaitsForEveryKeyUnderOnePrefix) {
  EtcdRendezvous waiter(session());
  ASSERT_TRUE(waiter.set("node/0", "zero").ok());
  std::thread other([] {
    EtcdRendezvous setter(session());
    std::this_thread::sleep_for(150ms);
    (void)setter.set("node/2", "two");
    (void)setter.set("nodes-other", "x");
    std::this_thread::sleep_for(150ms);
    (void)setter.set("node/1", "one");
  });
  auto all = waiter.get_all({"node/0", "node/1", "node/2"}, 5s);
  other.join();
  ASSERT_TRUE(all.ok()) << all.error().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].value_or(""), "zero");
  EXPECT_EQ((*all)[1].value_or(""), "one");
  EXPECT_EQ((*all)[2].value_or(""), "two");
  EXPECT_TRUE(*waiter.check({"node/0", "node/1"}));
  EXPECT_FALSE(*waiter.check({"node/0", "node/9"}));
}

TEST_F(EtcdRendezvousTest, AWatchedKeyWakesOneDescriptorThatNeverChanges) {
  EtcdRendezvous watcher(session());
  const int fd = watcher.fd();
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(watcher.start_get("abort", 1s).ok());
  pollfd quiet{fd, POLLIN, 0};
  EXPECT_EQ(poll(&quiet, 1, 200), 0);  // nothing yet
  EtcdRendezvous setter(session());
  ASSERT_TRUE(setter.set("abort", "failure").ok());
  pollfd ready{fd, POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, kMustCome), 1);
  auto heard = watcher.finish_get();
  ASSERT_TRUE(heard.ok()) << heard.error().message();
  EXPECT_EQ(heard->value_or(""), "failure");
  ASSERT_TRUE(watcher.start_get("abort", 1s).ok());  // an existing key: at once
  EXPECT_EQ(watcher.fd(), fd);
  pollfd again{fd, POLLIN, 0};
  EXPECT_EQ(poll(&again, 1, kMustCome), 1);
}

// A round's verdict waited for on its abort's watch (one watch for both): the verdict comes
// through get(), and the abort, whether it comes after the verdict or before it (held while
// get() waited), wakes the event loop's descriptor and is what finish_get gives.
TEST_F(EtcdRendezvousTest, AKeyFollowedBesideComesOnTheSameWatch) {
  for (const bool abort_first : {false, true}) {
    const std::string round = abort_first ? "r1/" : "r0/";
    auto shared = session();
    EtcdRendezvous joining(shared);
    EtcdRendezvous watching(shared);
    EtcdRendezvous node0(session());
    auto joined =
        joining.batch({BatchOp::get_now(round + "abort"), BatchOp::get_now(round + "verdict")});
    ASSERT_TRUE(joined.ok()) << joined.error().message();
    ASSERT_TRUE(watching.follow_beside(round + "verdict"));
    const long long streams = watch_streams_started();
    ASSERT_GE(streams, 0);
    ASSERT_TRUE(watching.start_get(round + "abort", 1s).ok());
    if (abort_first) {
      ASSERT_TRUE(node0.set(round + "abort", "lost").ok());
    }
    ASSERT_TRUE(node0.set(round + "verdict", "agreed").ok());
    auto verdict = watching.get(round + "verdict", 3s);
    ASSERT_TRUE(verdict.ok()) << verdict.error().message();
    EXPECT_EQ(verdict->value_or("none"), "agreed");
    EXPECT_EQ(watch_streams_started(), streams + 1) << "one watch for the abort and the verdict";
    pollfd quiet{watching.fd(), POLLIN, 0};
    if (!abort_first) {
      EXPECT_EQ(poll(&quiet, 1, 200), 0) << "no abort yet";
      ASSERT_TRUE(node0.set(round + "abort", "lost").ok());
    }
    pollfd ready{watching.fd(), POLLIN, 0};
    ASSERT_EQ(poll(&ready, 1, kMustCome), 1) << (abort_first ? "abort held" : "abort after");
    auto heard = watching.finish_get();
    ASSERT_TRUE(heard.ok()) << heard.error().message();
    EXPECT_EQ(heard->value_or("none"), "lost");
    pollfd drained{watching.fd(), POLLIN, 0};
    EXPECT_EQ(poll(&drained, 1, 100), 0) << "the held value given once";
  }
}

// A key beside that no batch found absent is not followed (no revision to watch both from):
// get() reads it (or would watch it on its own), and start_get's key is unaffected.
TEST_F(EtcdRendezvousTest, AKeyBesideWithoutARevisionIsWaitedForOnItsOwn) {
  EtcdRendezvous watching(session());
  EtcdRendezvous node0(session());
  ASSERT_TRUE(node0.set("verdict", "agreed").ok());
  ASSERT_TRUE(watching.follow_beside("verdict"));
  const long long streams = watch_streams_started();
  ASSERT_TRUE(watching.start_get("abort", 1s).ok());
  auto verdict = watching.get("verdict", 2s);
  ASSERT_TRUE(verdict.ok()) << verdict.error().message();
  EXPECT_EQ(verdict->value_or("none"), "agreed");
  EXPECT_EQ(watch_streams_started(), streams + 1) << "the verdict read, not watched";
  ASSERT_TRUE(node0.set("abort", "lost").ok());
  pollfd ready{watching.fd(), POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, kMustCome), 1);
  auto heard = watching.finish_get();
  ASSERT_TRUE(heard.ok()) << heard.error().message();
  EXPECT_EQ(heard->value_or("none"), "lost");
}

// What each counter brings comes with its number in one write (the count's put carries it),
// and a coordinator that starts reading after they came reads them all, in count order, from
// the count's history; one that comes later wakes wait_count and is read the same way.
TEST_F(EtcdRendezvousTest, ACountersSlotComesWithItsNumberFromTheCountsHistory) {
  std::vector<std::unique_ptr<EtcdRendezvous>> launchers;
  std::map<std::int64_t, std::string> brought;  // count -> what was brought with it
  for (const std::string slot : {"11 host-a -1", "12 host-b 3", "13 host-c 0"}) {
    launchers.push_back(std::make_unique<EtcdRendezvous>(session()));
    auto counted = launchers.back()->batch({BatchOp::add_one("round/count", slot)});
    ASSERT_TRUE(counted.ok()) << counted.error().message();
    brought[std::atoll(counted->front().value_or("0").c_str())] = slot;
  }
  ASSERT_EQ(brought.size(), 3u) << "a number of its own each";
  EXPECT_EQ(brought.begin()->first, 1);
  EtcdRendezvous coordinator(session());
  auto count = coordinator.wait_count("round/count", 0, "", 1s);
  ASSERT_TRUE(count.ok()) << count.error().message();
  ASSERT_EQ(*count, 3);
  auto slots = coordinator.arrivals("round/count", 0, 3, 2s);
  ASSERT_TRUE(slots.ok()) << slots.error().message();
  ASSERT_EQ(slots->size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ((*slots)[k].value_or("none"), brought[k + 1]);
  EtcdRendezvous late(session());
  ASSERT_TRUE(late.batch({BatchOp::add_one("round/count", "14 host-d -1")}).ok());
  auto more = coordinator.wait_count("round/count", 3, "", 3s);
  ASSERT_TRUE(more.ok()) << more.error().message();
  EXPECT_EQ(*more, 4);
  auto last = coordinator.arrivals("round/count", 3, 4, 2s);
  ASSERT_TRUE(last.ok()) << last.error().message();
  EXPECT_EQ(last->front().value_or("none"), "14 host-d -1");
}

// The answer to a counter (its place, under its number's key) is read in the counting
// transaction and, absent, watched from its revision without a read: an answer written between
// the two is not lost.
TEST_F(EtcdRendezvousTest, AnAnswerWrittenRightAfterTheCountIsNotLost) {
  EtcdRendezvous waiting(session());
  EtcdRendezvous coordinator(session());
  const std::string place = RendezvousClient::answer_key("r/count", 21);
  auto counted =
      waiting.batch({BatchOp::add_one("r/count", "21 host-a -1"), BatchOp::get_now(place)});
  ASSERT_TRUE(counted.ok()) << counted.error().message();
  EXPECT_EQ(counted->front().value_or("0"), "1");
  EXPECT_FALSE((*counted)[1].has_value());
  ASSERT_TRUE(coordinator.set(place, "21 0 1 0\n*late").ok());
  auto answer = waiting.get(place, 3s);
  ASSERT_TRUE(answer.ok()) << answer.error().message();
  EXPECT_EQ(answer->value_or("none"), "21 0 1 0\n*late");
}

// A launcher's watch for its next seat is opened long before the round (watch_next_seat); were
// its first revision compacted away meanwhile, etcd cancels the watch, and the wait opens it
// again from what etcd holds now rather than failing the launcher.
TEST_F(EtcdRendezvousTest, AWaitWhoseStartWasCompactedAwayWatchesAgain) {
  auto shared = session();
  EtcdRendezvous seat(shared);
  EtcdRendezvous coordinator(session());
  const std::string place = RendezvousClient::answer_key("n/count", 7);
  ASSERT_TRUE(seat.batch({BatchOp::get_now(place), BatchOp::get_now("n/abort")}).ok());
  ASSERT_TRUE(seat.follow_beside("n/abort"));  // as a seat's watch: on the round's stream
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(coordinator.set("n/noise", std::to_string(i)).ok());
  ASSERT_TRUE(compact_now(*shared));
  std::thread answers([] {
    EtcdRendezvous late(session());
    std::this_thread::sleep_for(300ms);
    (void)late.set(RendezvousClient::answer_key("n/count", 7), "7 spare\n*late");
  });
  auto answer = seat.get(place, 5s);
  answers.join();
  ASSERT_TRUE(answer.ok()) << answer.error().message();
  EXPECT_EQ(answer->value_or("none"), "7 spare\n*late");
}

// etcd compacted the count's history away (a cluster with auto-compaction) before the
// coordinator read it: the slots before are unreadable (nullopt: their launchers are told they
// came late), not an error and not a wait, and those that come afterwards are read.
TEST_F(EtcdRendezvousTest, ACompactedHistoryLeavesEarlierSlotsUnreadNotTheRound) {
  auto shared = session();
  EtcdRendezvous first(shared);
  for (const std::string slot : {"31 host-a -1", "32 host-b -1"}) {
    ASSERT_TRUE(first.batch({BatchOp::add_one("c/count", slot)}).ok());
  }
  ASSERT_TRUE(first.set("c/after", "x").ok());  // the compaction's revision: past both puts
  ASSERT_TRUE(compact_now(*shared));
  EtcdRendezvous coordinator(session());
  auto count = coordinator.wait_count("c/count", 1, "", 2s);
  ASSERT_TRUE(count.ok()) << count.error().message();
  EXPECT_EQ(*count, 2);
  const auto before = std::chrono::steady_clock::now();
  auto slots = coordinator.arrivals("c/count", 0, 2, 3s);
  ASSERT_TRUE(slots.ok()) << slots.error().message();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 2s) << "not waited for";
  ASSERT_EQ(slots->size(), 2u);
  EXPECT_FALSE((*slots)[0].has_value());
  EXPECT_FALSE((*slots)[1].has_value());
  EtcdRendezvous late(session());
  ASSERT_TRUE(late.batch({BatchOp::add_one("c/count", "33 host-c -1")}).ok());
  auto more = coordinator.wait_count("c/count", 2, "", 3s);
  ASSERT_TRUE(more.ok()) << more.error().message();
  EXPECT_EQ(*more, 3);
  auto last = coordinator.arrivals("c/count", 2, 3, 2s);
  ASSERT_TRUE(last.ok()) << last.error().message();
  EXPECT_EQ(last->front().value_or("none"), "33 host-c -1");
}

// A waiting launcher's seat, then its round's verdict and abort: one watch for the three,
// opened from the counting batch's revision, the round's watch once it is seated.
TEST_F(EtcdRendezvousTest, ASeatAndItsRoundsNewsAreOneWatch) {
  auto shared = session();
  EtcdRendezvous control(shared);
  EtcdRendezvous seat(shared);
  EtcdRendezvous coordinator(session());
  const std::string place = RendezvousClient::answer_key("s/count", 41);
  auto counted = control.batch({BatchOp::add_one("s/count", "41 host-a 1"), BatchOp::get_now(place),
                                BatchOp::get_now("s/abort"), BatchOp::get_now("s/verdict")});
  ASSERT_TRUE(counted.ok()) << counted.error().message();
  ASSERT_TRUE(seat.follow_beside("s/abort"));
  ASSERT_TRUE(seat.follow_beside("s/verdict"));
  const long long streams = watch_streams_started();
  ASSERT_GE(streams, 0);
  ASSERT_TRUE(coordinator.set(place, "1 2 0").ok());
  auto seated = seat.get(place, 3s);
  ASSERT_TRUE(seated.ok()) << seated.error().message();
  EXPECT_EQ(seated->value_or("none"), "1 2 0");
  ASSERT_TRUE(coordinator.set("s/verdict", "agreed").ok());
  ASSERT_TRUE(seat.follow_beside("s/verdict"));  // as join asks again: nothing new
  ASSERT_TRUE(seat.start_get("s/abort", 1s).ok());
  auto verdict = seat.get("s/verdict", 3s);
  ASSERT_TRUE(verdict.ok()) << verdict.error().message();
  EXPECT_EQ(verdict->value_or("none"), "agreed");
  pollfd quiet{seat.fd(), POLLIN, 0};
  EXPECT_EQ(poll(&quiet, 1, 200), 0) << "no abort yet";
  ASSERT_TRUE(coordinator.set("s/abort", "lost").ok());
  pollfd ready{seat.fd(), POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, kMustCome), 1);
  auto heard = seat.finish_get();
  ASSERT_TRUE(heard.ok()) << heard.error().message();
  EXPECT_EQ(heard->value_or("none"), "lost");
  EXPECT_EQ(watch_streams_started(), streams + 1) << "one watch for the seat, verdict and abort";
}

// etcd cancels a round's watch (its start revision compacted away meanwhile): finish_get says
// so, and the next start_get opens the watch again instead of waiting on the dead one.
TEST_F(EtcdRendezvousTest, ACanceledRoundWatchIsOpenedAgain) {
  auto shared = session();
  EtcdRendezvous control(shared);
  EtcdRendezvous watching(shared);
  EtcdRendezvous other(session());
  ASSERT_TRUE(control.batch({BatchOp::get_now("w/abort")}).ok());  // absent: watched from here
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(other.set("w/noise", std::to_string(i)).ok());
  ASSERT_TRUE(compact_now(*shared));
  ASSERT_TRUE(watching.start_get("w/abort", 1s).ok());
  pollfd canceled{watching.fd(), POLLIN, 0};
  ASSERT_EQ(poll(&canceled, 1, kMustCome), 1) << "etcd's cancel wakes the descriptor";
  EXPECT_FALSE(watching.finish_get().ok());
  ASSERT_TRUE(watching.start_get("w/abort", 1s).ok());
  ASSERT_TRUE(other.set("w/abort", "lost").ok());
  pollfd ready{watching.fd(), POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, kMustCome), 1);
  auto heard = watching.finish_get();
  ASSERT_TRUE(heard.ok()) << heard.error().message();
  EXPECT_EQ(heard->value_or("none"), "lost");
}

}  // namespace
}  // namespace aml::etcd

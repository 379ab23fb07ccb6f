// The etcd rendezvous' waits against a real etcd: a wait right after a batch misses nothing
// put between the two, a wait for many keys under one prefix, the one descriptor an event loop
// registers, and a key followed beside another on the same watch.
#include <poll.h>

#include "etcd/etcd_rendezvous.hpp"
#include "etcd_rendezvous_fixture.hpp"

namespace aml::etcd {
namespace {

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
  ASSERT_EQ(poll(&ready, 1, 3000), 1);
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
  ASSERT_EQ(poll(&ready, 1, 3000), 1);
  auto heard = watcher.finish_get();
  ASSERT_TRUE(heard.ok()) << heard.error().message();
  EXPECT_EQ(heard->value_or(""), "failure");
  ASSERT_TRUE(watcher.start_get("abort", 1s).ok());  // an existing key: at once
  EXPECT_EQ(watcher.fd(), fd);
  pollfd again{fd, POLLIN, 0};
  EXPECT_EQ(poll(&again, 1, 3000), 1);
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
    ASSERT_EQ(poll(&ready, 1, 3000), 1) << (abort_first ? "abort held" : "abort after");
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
  ASSERT_EQ(poll(&ready, 1, 3000), 1);
  auto heard = watching.finish_get();
  ASSERT_TRUE(heard.ok()) << heard.error().message();
  EXPECT_EQ(heard->value_or("none"), "lost");
}

}  // namespace
}  // namespace aml::etcd

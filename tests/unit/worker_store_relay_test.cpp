// The nodes' relays to the workers' store (store/relay/worker_store_relay.hpp, the door's side in
// relay_trunks.cpp), with clients on raw sockets: ranks on two nodes meet through their
// relays; one worker's garbage, or its unread replies, costs its neighbours on the same relay
// nothing; what a worker sent before it left is done; node 0's store going away closes the
// node's workers' connections instead of leaving them hanging.
#include "store/core/store_host.hpp"
#include "torch_raw_client.hpp"

namespace aml {
namespace {

using namespace torch_raw;

class WorkerStoreRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto served = StoreHost::start_workers_store(
        "127.0.0.1", 0, std::make_shared<store::AdmittedHosts>(), "the test's store", "test");
    ASSERT_TRUE(served.ok()) << served.error().message();
    door_ = std::move(*served);
    for (auto* relay : {&node1_, &node2_}) {
      auto started = RelayHost::start("127.0.0.1", door_->port(), "127.0.0.1", 0);
      ASSERT_TRUE(started.ok()) << started.error().message();
      *relay = std::move(*started);
    }
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
  }
  // A torch >= 2.2 client of the store through `relay`.
  int client(const RelayHost& relay) {
    const int fd = connect_to(relay.port());
    EXPECT_GE(fd, 0);
    fds_.push_back(fd);
    say(fd, validate());
    return fd;
  }
  std::unique_ptr<StoreHost> door_;
  std::unique_ptr<RelayHost> node1_, node2_;
  std::vector<int> fds_;
};

TEST_F(WorkerStoreRelayTest, RanksOnTwoNodesMeetThroughTheirRelays) {
  const int waiter = client(*node1_);
  say(waiter, op(Op::wait) + u64(1) + str("/rank0"));
  EXPECT_EQ(hear(waiter, 1, 300), "");  // not there yet
  const int rank0 = client(*node2_);
  say(rank0, op(Op::set) + str("/rank0") + str("unique id"));
  EXPECT_EQ(hear(waiter, 1), std::string(1, '\0'));  // STOP_WAITING
  say(waiter, op(Op::get) + str("/rank0"));
  EXPECT_EQ(hear(waiter, 8 + 9), u64(9) + "unique id");
  // Two ranks of one node are two streams, each with its own replies.
  const int neighbour = client(*node1_);
  say(neighbour, op(Op::add) + str("/count") + u64(2));
  say(waiter, op(Op::add) + str("/count") + u64(3));
  const std::string a = hear(neighbour, 8), b = hear(waiter, 8);
  EXPECT_TRUE((a == u64(2) && b == u64(5)) || (a == u64(5) && b == u64(3)))
      << "the adds answered out of their streams";
}

TEST_F(WorkerStoreRelayTest, GarbageFromOneWorkerClosesItAloneAndItsNeighbourIsServed) {
  const int bad = client(*node1_);
  const int good = client(*node1_);
  say(good, op(Op::wait) + u64(1) + str("/k"));
  say(bad, std::string(1, static_cast<char>(99)));
  EXPECT_EQ(hear(bad, 1), "EOF");
  const int setter = client(*node2_);
  say(setter, op(Op::set) + str("/k") + str("v"));
  EXPECT_EQ(hear(good, 1), std::string(1, '\0'));
  say(good, op(Op::ping) + std::string("\7\0\0\0", 4));
  EXPECT_EQ(hear(good, 4), std::string("\7\0\0\0", 4));
}

TEST_F(WorkerStoreRelayTest, AWorkerThatDoesNotReadItsRepliesIsDroppedAloneAndTheOthersGoOn) {
  const int setter = client(*node2_);
  say(setter, op(Op::set) + str("/big") + str(std::string(8 * 1024 * 1024, 'b')));
  say(setter, op(Op::ping) + std::string("\1\0\0\0", 4));
  ASSERT_EQ(hear(setter, 4, 5000), std::string("\1\0\0\0", 4));  // the SET is in
  const int greedy = client(*node1_);
  const int neighbour = client(*node1_);
  // 48 MiB of replies it never reads: over the relay's 16 MiB for one worker.
  std::string gets;
  for (int i = 0; i < 6; ++i) gets += op(Op::get) + str("/big");
  say(greedy, gets);
  for (int i = 0; i < 20; ++i) {
    say(neighbour, op(Op::ping) + std::string(1, static_cast<char>(i)) + std::string(3, '\0'));
    ASSERT_EQ(hear(neighbour, 4, 5000), std::string(1, static_cast<char>(i)) + std::string(3, '\0'))
        << "the neighbour waited behind a worker that does not read";
  }
  // The greedy one was dropped: what it can still read ends, short of the 48 MiB asked for.
  std::string all = hear(greedy, 49u << 20, 5000);
  EXPECT_TRUE(all.ends_with("EOF")) << all.size() << " bytes and no end";
  EXPECT_LT(all.size(), 48u << 20);
}

TEST_F(WorkerStoreRelayTest, WhatAWorkerSentBeforeItLeftIsDone) {
  const int leaving = client(*node1_);
  say(leaving, op(Op::set) + str("/goodbye") + str("done"));
  close(leaving);
  fds_.erase(std::find(fds_.begin(), fds_.end(), leaving));
  const int other = client(*node2_);
  say(other, op(Op::wait) + u64(1) + str("/goodbye"));
  EXPECT_EQ(hear(other, 1), std::string(1, '\0'));
}

TEST_F(WorkerStoreRelayTest, Node0sStoreGoingAwayClosesTheNodesWorkersConnections) {
  const int waiter = client(*node1_);
  say(waiter, op(Op::wait) + u64(1) + str("/never"));
  EXPECT_EQ(hear(waiter, 1, 200), "");
  door_.reset();
  EXPECT_EQ(hear(waiter, 1, 5000), "EOF") << "a worker left hanging on a store that is gone";
  // And the relay takes no more: a worker that comes later is refused, not left waiting.
  bool refused = false;
  for (int i = 0; i < 50 && !refused; ++i) {
    refused = connect_to(node1_->port()) < 0;
    if (!refused) usleep(20000);
  }
  EXPECT_TRUE(refused);
}

TEST_F(WorkerStoreRelayTest, Torch20sWatchesWorkThroughARelay) {
  const int watcher = connect_to(node1_->port());
  ASSERT_GE(watcher, 0);
  fds_.push_back(watcher);
  say(watcher, std::string(1, '\7') + str("/w"));  // a legacy callback connection's WATCH_KEY
  EXPECT_EQ(hear(watcher, 1), std::string(1, '\3'));
  const int setter = client(*node2_);
  say(setter, op(Op::set) + str("/w") + str("one"));
  EXPECT_EQ(hear(watcher, 1 + 10 + 8 + 11),
            std::string(1, '\1') + str("/w") + str("") + str("one"));
}

}  // namespace
}  // namespace aml

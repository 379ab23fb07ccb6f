// The store's torch door (torch/torch_door.cpp) with its own clients on raw sockets: what the
// replays of torch's recordings do not reach. A bad client closes alone; a waiter costs the
// others nothing; a queue's entry wakes one waiter; <= 2.0's watches; a goodbye SET is kept.
#include "store/core/store_host.hpp"
#include "torch_raw_client.hpp"

namespace aml {
namespace {

using namespace torch_raw;

class TorchDoor : public ::testing::Test {
 protected:
  void SetUp() override {
    auto served = StoreHost::start_workers_store(
        "127.0.0.1", 0, std::make_shared<store::AdmittedHosts>(), "the test's store", "test");
    ASSERT_TRUE(served.ok()) << served.error().message();
    host_ = std::move(*served);
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
  }
  // A connection that has said nothing yet.
  int connected() {
    const int fd = connect_to(host_->port());
    EXPECT_GE(fd, 0);
    fds_.push_back(fd);
    return fd;
  }
  // A connection that has validated (torch >= 2.2).
  int client() {
    const int fd = connected();
    say(fd, validate());
    return fd;
  }
  std::unique_ptr<StoreHost> host_;
  std::vector<int> fds_;
};

TEST_F(TorchDoor, AnUnknownOperationClosesThatConnectionAloneAndAWaiterGoesOn) {
  const int waiter = client();
  say(waiter, op(Op::wait) + u64(1) + str("/k"));
  const int bad = client();
  say(bad, std::string(1, static_cast<char>(99)));
  EXPECT_EQ(hear(bad, 1), "EOF");
  const int setter = client();
  say(setter, op(Op::set) + str("/k") + str("v"));
  EXPECT_EQ(hear(waiter, 1), std::string(1, '\0'));  // STOP_WAITING
  say(waiter, op(Op::get) + str("/k"));
  EXPECT_EQ(hear(waiter, 9), u64(1) + "v");
}

TEST_F(TorchDoor, AKeyOverTorchsLimitClosesItsConnection) {
  const int fd = client();
  say(fd, op(Op::get) + u64(8 * 1024 + 1));
  EXPECT_EQ(hear(fd, 1), "EOF");
}

TEST_F(TorchDoor, AWaitingClientGoesOnWithOtherRequestsAndCancelsItsWait) {
  const int fd = client();
  say(fd, op(Op::wait) + u64(1) + str("/never"));
  say(fd, op(Op::num_keys));
  EXPECT_EQ(hear(fd, 8), u64(0));
  say(fd, op(Op::cancel_wait));
  EXPECT_EQ(hear(fd, 1), std::string(1, '\1'));  // WAIT_CANCELED
  // The canceled wait is gone: the key's arrival says nothing more.
  const int other = client();
  say(other, op(Op::set) + str("/never") + str("x"));
  EXPECT_EQ(hear(fd, 1, 300), "");
}

TEST_F(TorchDoor, AQueuesEntryWakesOneWaiter) {
  const int a = client(), b = client();
  say(a, op(Op::wait) + u64(1) + str("/q"));
  say(b, op(Op::wait) + u64(1) + str("/q"));
  hear(a, 1, 200);  // both registered
  const int pusher = client();
  say(pusher, op(Op::queue_push) + str("/q") + str("e1"));
  const std::string woke_a = hear(a, 1, 500), woke_b = hear(b, 1, 500);
  EXPECT_EQ(woke_a.size() + woke_b.size(), 1u)
      << "woken: a " << woke_a.size() << ", b " << woke_b.size();
  say(pusher, op(Op::queue_len) + str("/q"));
  EXPECT_EQ(hear(pusher, 8), u64(1));
}

TEST_F(TorchDoor, Torch20sWatchedKeyTellsItsCallbackConnectionOfEachChange) {
  // A legacy callback connection: WATCH_KEY 7 as its first request.
  const int watcher = connected();
  say(watcher, std::string(1, '\7') + str("/w"));
  EXPECT_EQ(hear(watcher, 1), std::string(1, '\3'));  // KEY_CALLBACK_REGISTERED
  const int setter = client();
  say(setter, op(Op::set) + str("/w") + str("one"));
  EXPECT_EQ(hear(watcher, 1 + 10 + 8 + 11),
            std::string(1, '\1') + str("/w") + str("") + str("one"));
  say(setter, op(Op::set) + str("/w") + str("two"));
  EXPECT_EQ(hear(watcher, 1 + 10 + 11 + 11),
            std::string(1, '\0') + str("/w") + str("one") + str("two"));
}

TEST_F(TorchDoor, ASetSentJustBeforeTheClientLeftIsKept) {
  const int fd = client();
  say(fd, op(Op::set) + str("/goodbye") + str("v"));
  shutdown(fd, SHUT_WR);
  hear(fd, 1, 300);
  const int other = client();
  say(other, op(Op::check) + u64(1) + str("/goodbye"));
  EXPECT_EQ(hear(other, 1), std::string(1, '\0'));  // READY
}

}  // namespace
}  // namespace aml

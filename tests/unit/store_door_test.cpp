// A door of the test's own over the store's core (store/core/store_door.hpp): a line protocol
// that is neither the launchers' nor torch's. It gets the core's keys, blocked waits and their
// deadlines, admission at accept and a clean close from the interface alone, as a third door
// would.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

#include "store/core/store_core.hpp"
#include "store_fixture.hpp"

namespace aml {
namespace {

using store::Connection;
using store::StoreCore;

struct LineConnection : store::ConnectionState {
  std::size_t bytes() const override { return sizeof(*this) + in.capacity(); }
  std::string in;
};

// "SET key value", "GET key", "WAIT key ms": a reply line each; anything else closes.
class LineDoor final : public store::StoreDoor {
 public:
  LineDoor(StoreCore& core, bool admit) : core_(core), admit_(admit) {}

  bool admits(const std::string&) override { return admit_; }
  void opened(Connection& c) override {
    c.member = true;
    c.state = std::make_unique<LineConnection>();
  }
  void received(Connection& c, std::string_view bytes) override { line(c).in.append(bytes); }
  void serve(Connection& c) override {
    std::string& in = line(c).in;
    for (std::size_t end; !c.waiting && (end = in.find('\n')) != std::string::npos;) {
      std::istringstream words(in.substr(0, end));
      in.erase(0, end + 1);
      std::string op, key, value;
      words >> op >> key >> value;
      if (op == "SET") {
        core_.data()[key] = value;
        core_.reply(c, "OK\n");
        core_.wake_waiters(key);
      } else if (op == "GET") {
        auto found = core_.data().find(key);
        core_.reply(c, (found == core_.data().end() ? "NONE" : found->second) + "\n");
      } else if (op == "WAIT" && !core_.all_present({key})) {
        core_.start_wait(c, {key}, static_cast<std::uint32_t>(std::stoul(value)));
      } else if (op == "WAIT") {
        core_.reply(c, "READY\n");
      } else {
        return core_.close(c.id);
      }
    }
  }
  std::string wait_reply(Connection&, bool timed_out) override {
    return timed_out ? "TIMEOUT\n" : "READY\n";
  }
  void wait_over(Connection& c) override { serve(c); }
  bool mid_request(const Connection& c) const override {
    return !static_cast<const LineConnection&>(*c.state).in.empty();
  }

 private:
  static LineConnection& line(Connection& c) { return static_cast<LineConnection&>(*c.state); }
  StoreCore& core_;
  bool admit_;
};

class StoreDoorTest : public StoreServerFixture {
 protected:
  void SetUp() override {}  // each test starts its own door
  void start_door(bool admit) {
    start({}, [admit](StoreCore& core) { return std::make_unique<LineDoor>(core, admit); });
  }
  int dial() {
    int fd = raw();
    timeval tv{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
  }
  static void say(int fd, const std::string& text) {
    ASSERT_EQ(send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
  }
  // One reply line; "" where the server closed the connection or said nothing in 2 s.
  static std::string hear(int fd) {
    std::string line;
    char ch;
    while (recv(fd, &ch, 1, 0) == 1) {
      if (ch == '\n') return line;
      line += ch;
    }
    return "";
  }
};

TEST_F(StoreDoorTest, ANewDoorGetsTheCoresKeysAndItsWaitersAreWoken) {
  start_door(true);
  int waiter = dial(), setter = dial();
  say(waiter, "WAIT epoch 60000\nGET epoch\n");  // the GET waits behind the WAIT
  std::this_thread::sleep_for(100ms);
  say(setter, "SET epoch 7\n");
  EXPECT_EQ(hear(setter), "OK");
  EXPECT_EQ(hear(waiter), "READY");
  EXPECT_EQ(hear(waiter), "7");
  EXPECT_EQ(server_->key_count(), 1u);
  ::close(waiter);
  ::close(setter);
}

TEST_F(StoreDoorTest, ItsWaitsTimeOutAndAClosedWaiterLeavesNothingBehind) {
  start_door(true);
  int fd = dial();
  say(fd, "WAIT never 100\n");
  EXPECT_EQ(hear(fd), "TIMEOUT");
  say(fd, "WAIT never 60000\n");
  std::this_thread::sleep_for(100ms);
  ::close(fd);
  for (int i = 0; i < 100 && server_->connection_count() > 0; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server_->connection_count(), 0u);
  EXPECT_EQ(server_->pending_wait_entries(), 0u);
}

TEST_F(StoreDoorTest, WhatTheDoorDoesNotAdmitIsClosedAtAccept) {
  start_door(false);
  int fd = dial();
  say(fd, "SET key value\n");
  EXPECT_EQ(hear(fd), "");
  EXPECT_EQ(server_->key_count(), 0u);
  ::close(fd);
}

}  // namespace
}  // namespace aml

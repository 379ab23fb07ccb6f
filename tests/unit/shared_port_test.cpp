// One port, two doors (store/core/first_bytes.hpp, store/torch/torch_doorway.hpp): the launchers'
// store and the round's workers' torch store share one listening socket, and a connection's first
// bytes choose. Real servers on loopback, the launchers' real client, torch's wire on raw
// sockets.
#include <aml/store.hpp>
#include <thread>

#include "store/core/first_bytes.hpp"
#include "store/core/store_host.hpp"
#include "store/launchers/wire.hpp"
#include "store/relay/relay_wire.hpp"
#include "torch_raw_client.hpp"

namespace aml {
namespace {

using namespace torch_raw;
using store::door_for;
using store::FirstBytes;

TEST(FirstBytes, ALaunchersHelloGoesToTheLaunchersDoor) {
  const std::string hello = store::FrameWriter()
                                .u8(static_cast<std::uint8_t>(store::Opcode::hello))
                                .u32(store::kMagic)
                                .u16(store::kVersion)
                                .str("run-1")
                                .finish();
  EXPECT_EQ(door_for(hello), FirstBytes::launchers);
  for (std::size_t n = 0; n < store::kDoorBytes; ++n)
    EXPECT_EQ(door_for(hello.substr(0, n)), FirstBytes::undecided) << n;
}

TEST(FirstBytes, TorchsOpeningsAndARelaysHelloGoToTorchsDoor) {
  EXPECT_EQ(door_for(validate().substr(0, 2)), FirstBytes::torch);  // >= 2.2: 00 ce
  // torch 1.13's first ADD: query 3, then the key's u64 length.
  EXPECT_EQ(door_for(std::string(1, '\3') + u64(5) + "init/"), FirstBytes::torch);
  EXPECT_EQ(door_for(store::relay::hello()), FirstBytes::torch);
  // A one-byte request (<= 2.1's GETNUMKEYS) could still be a HELLO's first byte: the server
  // waits a moment for more (store_server.cpp's kPrefixWait).
  EXPECT_EQ(door_for(std::string(1, '\6')), FirstBytes::undecided);
}

class SharedPort : public ::testing::Test {
 protected:
  void SetUp() override {
    doorway_ = std::make_shared<store::TorchDoorway>();
    store::ServerOptions options;
    options.token = "run-1";
    options.torch_doorway = doorway_;
    options.handshake_timeout = std::chrono::milliseconds(300);
    auto served = StoreHost::start_with("127.0.0.1", 0, std::move(options), "the test", "test");
    ASSERT_TRUE(served.ok()) << served.error().message();
    launchers_ = std::move(*served);
    open_round();
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
  }
  void open_round() {
    round_.reset();
    auto round = StoreHost::start_behind(doorway_, launchers_->port(),
                                         std::make_shared<store::AdmittedHosts>(), "test");
    ASSERT_TRUE(round.ok()) << round.error().message();
    round_ = std::move(*round);
  }
  int torch_client(bool validated = true) {
    const int fd = connect_to(launchers_->port());
    EXPECT_GE(fd, 0);
    fds_.push_back(fd);
    if (validated) say(fd, validate());
    return fd;
  }
  std::shared_ptr<store::TorchDoorway> doorway_;
  std::unique_ptr<StoreHost> launchers_;
  std::unique_ptr<StoreHost> round_;
  std::vector<int> fds_;
};

TEST_F(SharedPort, LaunchersAndTorchClientsMeetAtOnePortWithKeysOfTheirOwn) {
  auto launcher = StoreClient::connect("127.0.0.1", launchers_->port(), "run-1");
  ASSERT_TRUE(launcher.ok()) << launcher.error().message();
  ASSERT_TRUE(launcher->set("/k", "launchers").ok());
  const int torch = torch_client();
  say(torch, op(Op::set) + str("/k") + str("workers"));
  say(torch, op(Op::get) + str("/k"));
  EXPECT_EQ(hear(torch, 15), u64(7) + "workers");
  auto theirs = launcher->get("/k", std::chrono::seconds(1));
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(theirs->value_or(""), "launchers");
}

TEST_F(SharedPort, ATorchClientSilentPastTheHandshakeDeadlineIsStillServed) {
  // torch's TCPStore connects and says nothing until it is used.
  const int quiet = torch_client(false);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  say(quiet, validate() + op(Op::set) + str("/q") + str("v") + op(Op::get) + str("/q"));
  EXPECT_EQ(hear(quiet, 9), u64(1) + "v");
}

TEST_F(SharedPort, ALegacyOneByteFirstRequestIsAnswered) {
  const int old = torch_client(false);
  say(old, std::string(1, '\6'));  // <= 2.1's GETNUMKEYS
  EXPECT_EQ(hear(old, 8), std::string(8, '\0'));
}

TEST_F(SharedPort, ANewRoundClosesTheLastOnesConnectionsAndHasNoneOfItsKeys) {
  const int before = torch_client();
  say(before, op(Op::set) + str("/round0") + str("x"));
  say(before, op(Op::check) + u64(1) + str("/round0"));
  EXPECT_EQ(hear(before, 1), std::string(1, '\0'));  // READY
  open_round();
  EXPECT_EQ(hear(before, 1), "EOF");
  const int after = torch_client();
  say(after, op(Op::check) + u64(1) + str("/round0"));
  EXPECT_EQ(hear(after, 1), std::string(1, '\1'));  // NOT_READY
}

TEST_F(SharedPort, BetweenRoundsATorchClientIsClosedAndTheLaunchersGoOn) {
  round_.reset();
  const int early = torch_client();
  say(early, op(Op::get) + str("/k"));
  EXPECT_EQ(hear(early, 1), "EOF");
  auto launcher = StoreClient::connect("127.0.0.1", launchers_->port(), "run-1");
  ASSERT_TRUE(launcher.ok()) << launcher.error().message();
  EXPECT_TRUE(launcher->set("/k", "v").ok());
}

}  // namespace
}  // namespace aml

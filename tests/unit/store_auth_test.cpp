// Only the job gets in (DESIGN §5): the store's handshake with a job secret, what a worker may
// not do, the limits on connections that have not proven themselves, and what is said.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <aml/store.hpp>
#include <vector>

#include "store/launchers/handshake.hpp"
#include "store_fixture.hpp"
#include "util/hex.hpp"

namespace aml {
namespace {

constexpr const char* kJob = "job-token";
const std::string kStoreSecret = "a job secret of more than sixteen bytes";

store::ServerAuth server_auth(const std::string& secret) {
  return {store::AuthKind::key, store::role_key(secret, kJob, store::Role::launcher),
          store::role_key(secret, kJob, store::Role::worker)};
}

StoreCredentials keyed(const std::string& secret, bool launcher) {
  StoreCredentials c;
  c.kind = StoreCredentials::Kind::key;
  c.launcher = launcher;
  c.member = launcher ? "node 1" : "rank 3";
  c.key = store::role_key(secret, kJob, launcher ? store::Role::launcher : store::Role::worker);
  return c;
}

class StoreAuthTest : public StoreServerFixture {
 protected:
  void SetUp() override {
    store::ServerOptions options;
    options.auth = server_auth(kStoreSecret);
    options.log = [this](const std::string& line) {
      std::lock_guard lock(said_mutex_);
      said_.push_back(line);
    };
    start(options);
  }
  Result<StoreClient> connect(const StoreCredentials& credentials) {
    return StoreClient::connect("127.0.0.1", server_->port(), kJob, credentials, 2s);
  }
  std::vector<std::string> said() {
    std::lock_guard lock(said_mutex_);
    return said_;
  }
  std::mutex said_mutex_;
  std::vector<std::string> said_;
};

TEST(Handshake, TheMacIsHmacSha256) {
  // RFC 4231, test case 2.
  EXPECT_EQ(to_hex(store::mac("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Handshake, KeysDifferByRoleAndJobAndProofsByWhoProves) {
  EXPECT_NE(store::role_key(kStoreSecret, "a", store::Role::launcher),
            store::role_key(kStoreSecret, "a", store::Role::worker));
  EXPECT_NE(store::role_key(kStoreSecret, "a", store::Role::launcher),
            store::role_key(kStoreSecret, "b", store::Role::launcher));
  const std::string n1(32, '1'), n2(32, '2');
  EXPECT_NE(store::proof_message(store::Role::store, store::Role::launcher, "j", "m", n1, n2),
            store::proof_message(store::Role::launcher, store::Role::launcher, "j", "m", n1, n2));
  // Length-prefixed: moving a byte from one field to the next is another message.
  EXPECT_NE(store::proof_message(store::Role::store, store::Role::worker, "ab", "c", n1, n2),
            store::proof_message(store::Role::store, store::Role::worker, "a", "bc", n1, n2));
  EXPECT_NE(store::random_nonce(), store::random_nonce());
  EXPECT_EQ(store::random_nonce().size(), store::kNonceBytes);
}

TEST(Handshake, HexBothWays) {
  EXPECT_EQ(from_hex(to_hex(std::string("\x00\xff\x10", 3))), std::string("\x00\xff\x10", 3));
  EXPECT_EQ(from_hex("abc"), "");  // odd length
  EXPECT_EQ(from_hex("zz"), "");
}

TEST_F(StoreAuthTest, TheJobsLaunchersAndWorkersAreAdmitted) {
  auto launcher = connect(keyed(kStoreSecret, true));
  ASSERT_TRUE(launcher.ok()) << launcher.error().message();
  EXPECT_TRUE(launcher->identify("1").ok());
  EXPECT_TRUE(launcher->set("aml/run/0/x", "1").ok());
  auto worker = connect(keyed(kStoreSecret, false));
  ASSERT_TRUE(worker.ok()) << worker.error().message();
  EXPECT_TRUE(worker->set("comm/0/x", "1").ok());
  EXPECT_EQ(**worker->get("comm/0/x", 1s), "1");
  EXPECT_EQ(server_->unproven_count(), 0u);
  EXPECT_TRUE(said().empty());
}

TEST_F(StoreAuthTest, ALongMemberNameIsCutNotRefused) {
  StoreCredentials launcher = keyed(kStoreSecret, true);
  launcher.member = "the launcher on " + std::string(300, 'h') + " (pid 1)";  // a long FQDN
  auto c = connect(launcher);
  ASSERT_TRUE(c.ok()) << c.error().message();
}

TEST_F(StoreAuthTest, NoCredentialsAWrongSecretAndAWorkersKeyAsALaunchersAreRefused) {
  auto none = connect(as_launcher());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("offered none"), std::string::npos)
      << none.error().message();
  // The client checks the store's proof first: with another secret, the store fails it.
  auto wrong = connect(keyed("another secret of sixteen bytes+", true));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message().find("its proof is wrong"), std::string::npos);
  StoreCredentials posing = keyed(kStoreSecret, false);
  posing.launcher = true;  // the workers' key, claiming a launcher
  auto refused = connect(posing);
  ASSERT_FALSE(refused.ok());
  // The last two left at the store's proof: the server hears of it on its own thread.
  for (int i = 0; i < 100 && server_->refusals() < 3; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server_->refusals(), 3u);
}

TEST_F(StoreAuthTest, AWorkerIsNoMemberAndCannotTouchTheLaunchersKeys) {
  auto worker = connect(keyed(kStoreSecret, false));
  ASSERT_TRUE(worker.ok());
  auto named = worker->identify("5");
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.error().message().find("not a member"), std::string::npos);
  auto other = connect(keyed(kStoreSecret, false));
  auto abort = other->set("aml/run/0/abort", "{}");
  ASSERT_FALSE(abort.ok());
  EXPECT_NE(abort.error().message().find("launchers' keys"), std::string::npos);
  auto launcher = connect(keyed(kStoreSecret, true));
  EXPECT_FALSE(launcher->check({"aml/run/0/abort"}).value());  // nothing was written
}

TEST_F(StoreAuthTest, AClientWithASecretRefusesAStoreWithout) {
  restart({});  // no secret at the store
  auto c = connect(keyed(kStoreSecret, true));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("has no job secret"), std::string::npos)
      << c.error().message();
}

TEST_F(StoreAuthTest, UnprovenConnectionsHaveADeadlineABudgetAndACap) {
  store::ServerOptions options;
  options.auth = server_auth(kStoreSecret);
  options.handshake_timeout = 300ms;
  options.max_unproven = 2;
  options.max_unproven_frame = 256;
  restart(options);
  int oldest = raw(), second = raw();
  std::this_thread::sleep_for(50ms);
  int third = raw();  // over the cap: the oldest goes
  EXPECT_TRUE(closed_by_server(oldest, 2s));
  // A byte now and then does not keep one alive past its deadline.
  ASSERT_EQ(send(second, "\x10", 1, 0), 1);
  EXPECT_TRUE(closed_by_server(second, 2s));
  EXPECT_TRUE(closed_by_server(third, 2s));
  int flooding = raw();  // more than a handshake before proving anything
  std::string junk(4096, 'x');
  (void)send(flooding, junk.data(), junk.size(), MSG_NOSIGNAL);
  EXPECT_TRUE(closed_by_server(flooding, 2s));
  for (int fd : {oldest, second, third, flooding}) close(fd);
  auto member = connect(keyed(kStoreSecret, true));  // the job's members still get in
  ASSERT_TRUE(member.ok()) << member.error().message();
  EXPECT_EQ(server_->unproven_count(), 0u);
}

TEST(StoreHandshake, SomethingElseAtThePortIsNamedNotWaitedOn) {
  // A web server's answer where the store should be (etcd's, a wrong port's alike).
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t length = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length);
  std::thread web([listener] {
    int c = accept(listener, nullptr, nullptr);
    char request[256];
    (void)recv(c, request, sizeof(request), 0);
    const std::string answer = "HTTP/1.0 400 Bad Request\r\n\r\n";
    (void)send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
    close(c);
  });
  auto c = StoreClient::connect("127.0.0.1", ntohs(addr.sin_port), kJob, as_launcher(), 2s);
  web.join();
  close(listener);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("something else listens there"), std::string::npos)
      << c.error().message();
}

TEST(RefusalLog, EachAddressAndReasonOnceAndAFewLinesAMinute) {
  std::vector<std::string> lines;
  store::RefusalLog log([&](const std::string& line) { lines.push_back(line); });
  auto t = store::RefusalLog::Clock::now();
  log.refused("10.0.0.9", "not an aml store client", t);
  log.refused("10.0.0.9", "not an aml store client", t);
  log.refused("10.0.0.9", "a wrong proof", t);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("10.0.0.9: not an aml store client"), std::string::npos);
  for (int i = 0; i < 100; ++i) log.refused("10.1.0." + std::to_string(i), "junk", t);
  EXPECT_EQ(lines.size(), store::RefusalLog::kLinesPerWindow);
  log.flush(t + store::RefusalLog::kWindow);
  ASSERT_EQ(lines.size(), store::RefusalLog::kLinesPerWindow + 1);
  EXPECT_NE(lines.back().find("refused 93 more connection(s) from 93 address(es)"),
            std::string::npos)
      << lines.back();
  EXPECT_EQ(log.refusals(), 103u);
}

}  // namespace
}  // namespace aml

// A store server on loopback, run by a thread of the test, and the clients the tests need:
// a well-behaved launcher's connection, or a raw socket for one that misbehaves.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <aml/store.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "store/core/store_server.hpp"

namespace aml {

using namespace std::chrono_literals;

// A launcher's credentials in a job without a secret.
inline StoreCredentials as_launcher() {
  StoreCredentials credentials;
  credentials.launcher = true;
  return credentials;
}

class StoreServerFixture : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }
  void TearDown() override { stop(); }

  // door: a door of the test's own over the core (none: the one options.door names).
  void start(store::ServerOptions options, const store::StoreServer::DoorMaker& door = {}) {
    if (options.token.empty()) options.token = "job-token";
    auto server = door ? store::StoreServer::listen("127.0.0.1", 0, options, door)
                       : store::StoreServer::listen("127.0.0.1", 0, options);
    ASSERT_TRUE(server.ok()) << server.error().message();
    server_ = std::move(*server);
    resume();
  }
  // The same server serving again after stop() (a paused host continued, a cut healed).
  void resume() {
    running_ = true;
    thread_ = std::thread([this] {
      while (running_) server_->poll_once(20);
    });
  }
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  void restart(store::ServerOptions options) {
    stop();
    start(options);
  }

  // A launcher's connection (a worker's may not identify itself, store_auth_test.cpp).
  StoreClient client() {
    auto c = StoreClient::connect("127.0.0.1", server_->port(), "job-token", as_launcher(), 2s);
    EXPECT_TRUE(c.ok()) << c.error().message();
    return std::move(*c);
  }

  // A raw socket, for clients that misbehave.
  int raw() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }
  // Whether the server closed the raw socket within the time given.
  static bool closed_by_server(int fd, std::chrono::milliseconds within) {
    timeval tv{static_cast<time_t>(within.count() / 1000),
               static_cast<suseconds_t>((within.count() % 1000) * 1000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char buffer[256];
    while (true) {
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n == 0) return true;
      if (n < 0) return false;  // timed out: still open
    }
  }

  std::unique_ptr<store::StoreServer> server_;
  std::thread thread_;
  std::atomic<bool> running_{false};
};

}  // namespace aml

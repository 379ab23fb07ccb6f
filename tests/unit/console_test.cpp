#include "supervisor/console.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace aml {
namespace {

struct Pipe {
  UniqueFd read, write;
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    read.reset(fds[0]);
    write.reset(fds[1]);
  }
  std::string take(std::size_t at_most) {
    std::string out(at_most, '\0');
    fcntl(read.get(), F_SETFL, O_NONBLOCK);
    ssize_t n = ::read(read.get(), out.data(), out.size());
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return out;
  }
};

std::string numbered(int from, int to) {
  std::string out;
  for (int i = from; i < to; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

TEST(Console, APipeNobodyReadsKeepsTheRestInsteadOfBlocking) {
  Pipe pipe;
  Console console(pipe.write.get());  // a blocking pipe: its own description is not
  const std::string first = numbered(0, 20000), second = numbered(20000, 30000);
  console.write(first);  // more than the pipe holds (64 KiB): this would block
  console.write(second);
  EXPECT_TRUE(console.blocked());
  std::string got;
  for (int i = 0; i < 1000 && (console.blocked() || got.size() < first.size() + second.size());
       ++i) {
    got += pipe.take(1 << 16);
    console.flush();
  }
  EXPECT_FALSE(console.blocked());
  EXPECT_EQ(got, first + second);  // everything, in order
}

TEST(Console, GivingUpDropsWhatWaitsAndWhatComes) {
  Pipe pipe;
  Console console(pipe.write.get());
  console.write(numbered(0, 20000));
  ASSERT_TRUE(console.blocked());
  console.give_up();
  EXPECT_FALSE(console.blocked());
  pipe.take(1 << 20);
  console.write("after\n");
  EXPECT_EQ(pipe.take(100), "");
}

TEST(Console, AReaderThatIsGoneEndsTheWaiting) {
  auto previous = signal(SIGPIPE, SIG_IGN);  // as in the launcher
  Pipe pipe;
  Console console(pipe.write.get());
  console.write(numbered(0, 20000));
  ASSERT_TRUE(console.blocked());
  pipe.read.reset();
  console.flush();  // EPIPE: nobody will read any more
  EXPECT_FALSE(console.blocked());
  signal(SIGPIPE, previous);
}

TEST(Console, ASocketNobodyReadsKeepsTheRestInsteadOfBlocking) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  UniqueFd ours(fds[0]), theirs(fds[1]);  // a blocking socket, as journald's stdout stream
  Console console(ours.get());
  const std::string lines = numbered(0, 200000);  // more than the socket buffers hold
  console.write(lines);
  EXPECT_TRUE(console.blocked());
  std::string got(lines.size(), '\0');
  std::size_t have = 0;
  for (int i = 0; i < 100000 && have < lines.size(); ++i) {
    ssize_t n = recv(theirs.get(), got.data() + have, got.size() - have, MSG_DONTWAIT);
    if (n > 0) have += static_cast<std::size_t>(n);
    console.flush();
  }
  EXPECT_FALSE(console.blocked());
  EXPECT_EQ(got, lines);
}

TEST(WriteWithin, GivesUpOnAPipeNobodyReadsAfterItsPatience) {
  Pipe pipe;
  const std::string lines = numbered(0, 20000);  // more than the pipe holds
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(write_within(pipe.write.get(), lines, std::chrono::milliseconds(200)));
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(200));
  EXPECT_LT(waited, std::chrono::seconds(5));
  std::string got = pipe.take(lines.size());
  EXPECT_FALSE(got.empty());
  EXPECT_EQ(got, lines.substr(0, got.size()));  // what fitted, in order
}

TEST(WriteWithin, WaitsForAReaderThatTakesItAll) {
  Pipe pipe;
  const std::string lines = numbered(0, 20000);
  std::string got;
  std::thread reader([&] {
    while (got.size() < lines.size()) {
      got += pipe.take(1 << 16);
      usleep(1000);
    }
  });
  EXPECT_TRUE(write_within(pipe.write.get(), lines, std::chrono::seconds(30)));
  reader.join();
  EXPECT_EQ(got, lines);
}

}  // namespace
}  // namespace aml

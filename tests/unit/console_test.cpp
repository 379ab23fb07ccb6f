#include "supervisor/console.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

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

}  // namespace
}  // namespace aml

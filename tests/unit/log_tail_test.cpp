#include "supervisor/log_tail.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "supervisor/console.hpp"
#include "supervisor/rank_log.hpp"

namespace aml {
namespace {

struct LogTailTest : ::testing::Test {
  std::string dir;
  std::unique_ptr<RankLog> log;
  UniqueFd console{memfd_create("console", MFD_CLOEXEC)};
  Console console_sink{console.get()};
  UniqueFd worker;  // the worker's stdout: its own appending description

  void SetUp() override {
    char name[] = "/tmp/aml-tail-XXXXXX";
    dir = mkdtemp(name);
    log = RankLog::create(dir + "/std_log_process_0.txt");
    ASSERT_TRUE(log);
    ASSERT_TRUE(log->readable());
    worker = log->open_for_worker();
    ASSERT_TRUE(worker);
  }
  void TearDown() override {
    log.reset();
    unlink((dir + "/std_log_process_0.txt").c_str());
    rmdir(dir.c_str());
  }
  void worker_writes(std::string_view data) {
    ASSERT_EQ(write(worker.get(), data.data(), data.size()), ssize_t(data.size()));
  }
  std::string read_all(int fd) const {
    std::string out(static_cast<std::size_t>(lseek(fd, 0, SEEK_END)), '\0');
    EXPECT_EQ(pread(fd, out.data(), out.size(), 0), ssize_t(out.size()));
    return out;
  }
  static void drain_all(LogTail& tail) {
    for (int i = 0; i < 1000 && tail.pending(); ++i) tail.drain();
  }
};

TEST_F(LogTailTest, ConsoleGetsTheWorkersLinesAndNotTheLaunchersOwn) {
  LogTail tail(*log, StreamSinks{&console_sink, "[rank 0] ", nullptr, false});
  worker_writes("out 1\nout");
  log->append("err 1\n");  // the launcher relays a stderr line into the same file
  worker_writes(" 2\n");
  log->append("err 2\n", "err 3\n");
  worker_writes("out 3\n");
  drain_all(tail);
  EXPECT_EQ(read_all(console.get()), "[rank 0] out 1\n[rank 0] out 2\n[rank 0] out 3\n");
  EXPECT_EQ(read_all(log->fd()), "out 1\nouterr 1\n 2\nerr 2\nerr 3\nout 3\n");
  tail.read_to_end_and_close();
  drain_all(tail);
  EXPECT_FALSE(tail.is_open());
}

TEST_F(LogTailTest, StartsAtTheEndOfWhatAnEarlierRoundWrote) {
  worker_writes("round 0\n");
  log->append("round 0 stderr\n");
  LogTail tail(*log, StreamSinks{&console_sink, "", nullptr, false});
  worker_writes("round 1\n");
  drain_all(tail);
  EXPECT_EQ(read_all(console.get()), "round 1\n");
}

TEST_F(LogTailTest, ClosingFlushesAPartialLineAndIgnoresLaterWrites) {
  LogTail tail(*log, StreamSinks{&console_sink, "", nullptr, false});
  worker_writes("last words");
  tail.read_to_end_and_close();
  worker_writes(" of something beyond reach\n");  // after the close point: not waited for
  drain_all(tail);
  EXPECT_FALSE(tail.is_open());
  EXPECT_EQ(read_all(console.get()), "last words\n");
  EXPECT_TRUE(log->own_writes().empty());  // tracking stopped with the tail
}

TEST_F(LogTailTest, InotifyReportsTheWorkersWrites) {
  UniqueFd events(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  ASSERT_TRUE(events);
  LogTail tail(*log, StreamSinks{&console_sink, "", nullptr, false});
  ASSERT_TRUE(tail.watch_with(events.get()));
  drain_all(tail);
  EXPECT_FALSE(tail.pending());
  worker_writes("hello\n");
  alignas(inotify_event) char buffer[4096];
  ssize_t n = read(events.get(), buffer, sizeof(buffer));
  ASSERT_GT(n, 0);
  EXPECT_EQ(reinterpret_cast<inotify_event*>(buffer)->wd, tail.watch_descriptor());
  tail.changed();
  drain_all(tail);
  EXPECT_EQ(read_all(console.get()), "hello\n");
}

// What a drain returns is the hang watch's progress: the worker's bytes alone.
TEST_F(LogTailTest, DrainCountsOnlyTheWorkersBytes) {
  LogTail tail(*log, StreamSinks{&console_sink, "", nullptr, false});
  EXPECT_TRUE(tail.pending());  // a new tail looks once
  EXPECT_EQ(tail.drain(), 0u);  // and finds nothing: the worker has not written yet
  log->append("a launcher's line\n");
  tail.changed();
  EXPECT_EQ(tail.drain(), 0u);
  worker_writes("hello\n");
  log->append("another\n");
  tail.changed();
  EXPECT_EQ(tail.drain(), 6u);
  EXPECT_EQ(read_all(console.get()), "hello\n");
}

TEST_F(LogTailTest, LargeOutputIsReadInBoundedSteps) {
  LogTail tail(*log, StreamSinks{&console_sink, "", nullptr, false});
  std::string line(99, 'x');
  line += '\n';
  std::string block;
  for (int i = 0; i < 100000; ++i) block += line;  // 10 MB, more than one drain reads
  worker_writes(block);
  tail.drain();
  EXPECT_TRUE(tail.pending());
  EXPECT_LT(read_all(console.get()).size(), block.size());
  drain_all(tail);
  EXPECT_EQ(read_all(console.get()), block);
}

}  // namespace
}  // namespace aml

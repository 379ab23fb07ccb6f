#include "supervisor/output_stream.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "supervisor/console.hpp"
#include "supervisor/rank_log.hpp"
#include "supervisor/run_workers.hpp"
#include "util/expand_fields.hpp"

namespace aml {
namespace {

// A file in memory standing in for the console or a log file.
struct MemFile {
  UniqueFd fd{memfd_create("sink", MFD_CLOEXEC)};
  Console sink{fd.get()};
  std::string contents() const {
    std::string out(static_cast<std::size_t>(lseek(fd.get(), 0, SEEK_END)), '\0');
    pread(fd.get(), out.data(), out.size(), 0);
    return out;
  }
};

// A rank's log file in a directory of its own, removed afterwards.
struct TempLog {
  std::string dir;
  std::unique_ptr<RankLog> log;
  TempLog() {
    char name[] = "/tmp/aml-log-XXXXXX";
    dir = mkdtemp(name);
    log = RankLog::create(dir + "/log.txt");
  }
  ~TempLog() {
    log.reset();
    unlink((dir + "/log.txt").c_str());
    rmdir(dir.c_str());
  }
  std::string contents() const {
    std::string out(static_cast<std::size_t>(log->size()), '\0');
    pread(log->fd(), out.data(), out.size(), 0);
    return out;
  }
};

// As the event loop does: drain while the pipe reports readable, until end of file.
void drain_to_end(OutputStream& stream) {
  for (int i = 0; i < 100 && stream.is_open(); ++i) stream.drain();
}

struct PipePair {
  UniqueFd read, write;
  PipePair() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    read.reset(fds[0]);
    write.reset(fds[1]);
  }
  void send(std::string_view data) {
    ASSERT_EQ(::write(write.get(), data.data(), data.size()), ssize_t(data.size()));
  }
};

TEST(OutputStream, JoinsLinesSplitAcrossReadsAndTagsEachLine) {
  MemFile console;
  TempLog log;
  PipePair pipe;
  OutputStream stream(std::move(pipe.read),
                      StreamSinks{&console.sink, "[rank 3] ", log.log.get(), false});
  pipe.send("first li");
  stream.drain();
  EXPECT_EQ(console.contents(), "");  // no whole line yet
  pipe.send("ne\nsecond\nthi");
  stream.drain();
  EXPECT_EQ(console.contents(), "[rank 3] first line\n[rank 3] second\n");
  pipe.write.reset();  // the worker is gone: its partial last line is flushed
  stream.drain();
  EXPECT_FALSE(stream.is_open());
  EXPECT_EQ(console.contents(), "[rank 3] first line\n[rank 3] second\n[rank 3] thi\n");
  EXPECT_EQ(log.contents(), "first line\nsecond\nthi");  // the log keeps the bytes as written
}

TEST(OutputStream, FilteredRankWritesOnlyItsLog) {
  TempLog log;
  PipePair pipe;
  OutputStream stream(std::move(pipe.read),
                      StreamSinks{nullptr, "[rank 1] ", log.log.get(), false});
  pipe.send("a\nb\n");
  pipe.write.reset();
  drain_to_end(stream);
  EXPECT_EQ(log.contents(), "a\nb\n");
}

TEST(OutputStream, KeepsTheLastTwentyLinesOfStderr) {
  MemFile console;
  PipePair pipe;
  OutputStream stream(std::move(pipe.read), StreamSinks{&console.sink, "", nullptr, true});
  std::string data;
  for (int i = 0; i < 50; ++i) data += "line " + std::to_string(i) + "\n";
  pipe.send(data);
  pipe.send("last words");
  pipe.write.reset();
  drain_to_end(stream);
  std::vector<std::string> tail = stream.tail(20);
  ASSERT_EQ(tail.size(), 20u);
  EXPECT_EQ(tail.front(), "line 31");
  EXPECT_EQ(tail.back(), "last words");
  EXPECT_EQ(console.contents(), data + "last words\n");
}

TEST(OutputStream, CloseFlushesAPartialLine) {
  MemFile console;
  PipePair pipe;
  OutputStream stream(std::move(pipe.read), StreamSinks{&console.sink, "", nullptr, false});
  pipe.send("held open by a grandchild");
  stream.drain();
  stream.close();
  EXPECT_EQ(console.contents(), "held open by a grandchild\n");
}

TEST(ExpandTag, ReplacesRankAndLocalRank) {
  EXPECT_EQ(expand_tag("[rank {rank}] ", 5, 1), "[rank 5] ");
  EXPECT_EQ(expand_tag("{local_rank}/{rank}:", 5, 1), "1/5:");
  EXPECT_EQ(expand_tag("{other}", 5, 1), "{other}");
  EXPECT_EQ(log_file_name(12), "std_log_process_12.txt");
}

TEST(ExpandFields, ReplacesOnlyTheNamedFieldsWhole) {
  EXPECT_EQ(expand_fields("s.{rank}.{node_rank}.json", {{"rank", 3}, {"node_rank", 1}}),
            "s.3.1.json");
  EXPECT_EQ(expand_fields("{rank}{rank}", {{"rank", 7}}), "77");
  EXPECT_EQ(expand_fields("{rank", {{"rank", 7}}), "{rank");
  EXPECT_EQ(expand_fields("{ranks}/{node_rank}", {{"rank", 7}}), "{ranks}/{node_rank}");
  EXPECT_EQ(expand_fields("}{", {{"rank", 7}}), "}{");
  EXPECT_EQ(expand_fields("", {{"rank", 7}}), "");
}

}  // namespace
}  // namespace aml

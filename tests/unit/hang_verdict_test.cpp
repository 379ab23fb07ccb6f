// Naming the odd one out of a hung job, and reading where a rank is from the tools' output.
#include "supervisor/hang_verdict.hpp"

#include <gtest/gtest.h>

#include "supervisor/stack_collection.hpp"

namespace aml {
namespace {

RankPlace at(int rank, int node, std::string place) {
  return {rank, node, std::move(place), "", {}};
}

TEST(HangVerdict, NamesTheRankThatIsNotWhereTheOthersWait) {
  EXPECT_EQ(hang_verdict({at(3, 1, "all_reduce (c10d.py:9)"), at(0, 0, "all_reduce (c10d.py:9)"),
                          at(2, 1, "load_batch (train.py:9)"), at(1, 0, "all_reduce (c10d.py:9)")}),
            "rank 2 (node 1) is in load_batch (train.py:9); ranks 0, 1 and 3 (nodes 0 and 1) "
            "wait in all_reduce (c10d.py:9)");
}

TEST(HangVerdict, OneNodeIsNotNamedAndTheFewestComeFirst) {
  EXPECT_EQ(hang_verdict({at(0, 0, "a"), at(1, 0, "a"), at(2, 0, "a"), at(3, 0, "b"), at(4, 0, "b"),
                          at(5, 0, "c")}),
            "rank 5 is in c; ranks 3 and 4 are in b; ranks 0, 1 and 2 wait in a");
}

TEST(HangVerdict, EveryoneInOnePlaceOrNoMajority) {
  EXPECT_EQ(hang_verdict({at(0, 0, "x"), at(1, 0, "x")}),
            "every rank is in x: none is the odd one out");
  EXPECT_EQ(hang_verdict({at(1, 0, "b"), at(0, 0, "a")}),
            "no place holds most ranks: rank 0 is in a; rank 1 is in b");
  EXPECT_EQ(hang_verdict({at(0, 0, ""), at(1, 0, "y"), at(2, 0, "y")}),
            "rank 0 is in an unknown place; ranks 1 and 2 wait in y");
  EXPECT_EQ(hang_verdict({}), "no rank could be looked at");
}

TEST(StackPlaces, PySpyMainThreadInnermostFrame) {
  const std::string dump =
      "Process 42: python train.py\nPython v3.11.2 (/usr/bin/python3.11)\n\n"
      "Thread 43 (idle): \"Thread-1\"\n    wait (threading.py:320)\n"
      "Thread 42 (idle): \"MainThread\"\n    load_batch (/work/train.py:9)\n"
      "    <module> (/work/train.py:15)\n";
  EXPECT_EQ(place_from_py_spy(dump), "load_batch (train.py:9)");
  EXPECT_EQ(place_from_py_spy("Error: permission denied\n"), "");
}

TEST(StackPlaces, FaulthandlerCurrentThreadElseTheFirst) {
  const std::string text =
      "Fatal Python error: Aborted\n\nThread 0x00007f01 (most recent call first):\n"
      "  File \"/usr/lib/python3/threading.py\", line 320 in wait\n\n"
      "Current thread 0x00007f00 (most recent call first):\n"
      "  File \"/work/train.py\", line 9 in load_batch\n"
      "  File \"/work/train.py\", line 15 in <module>\n";
  EXPECT_EQ(place_from_faulthandler(text), "load_batch (train.py:9)");
  EXPECT_EQ(place_from_faulthandler("Thread 0x1 (most recent call first):\n"
                                    "  File \"a.py\", line 3 in f\n"),
            "f (a.py:3)");
}

TEST(StackPlaces, GdbMainThreadInnermostFunctionThenItsCaller) {
  const std::string bt =
      "Thread 2 (Thread 0x7f01 (LWP 43) \"worker\"):\n#0  0x1 in epoll_wait () from libc\n"
      "Thread 1 (Thread 0x7f00 (LWP 42) \"worker\"):\n"
      "#0  0x00007f in __GI___libc_read (fd=3, buf=0x1, nbytes=1) at "
      "../sysdeps/unix/sysv/linux/read.c:26\n"
      "#1  0x000055 in wait_for_input (fd=3) at blocked_read.c:8\n"
      "#2  0x000055 in main () at blocked_read.c:16\n";
  EXPECT_EQ(place_from_gdb(bt), "read < wait_for_input (blocked_read.c:8)");
  EXPECT_EQ(place_from_gdb("#0  0x1 in __GI___libc_read (fd=3) at ../sysdeps/read.c:26\n"
                           "#1  0x2 in (anonymous namespace)::wait_for_input (fd=3) at b.cpp:11\n"),
            "read < wait_for_input (b.cpp:11)");
  EXPECT_EQ(place_from_gdb("#0  0x1 in __GI___clock_nanosleep (a=1) at x/sysdeps/y.c:7\n"
                           "#1  0x2 in ?? ()\n"),
            "clock_nanosleep");
}

}  // namespace
}  // namespace aml

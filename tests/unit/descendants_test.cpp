// What every launch's last sweep asks of the kernel: whether any child is left, and which.
#include "supervisor/descendants.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace aml {
namespace {

// A child that waits on a pipe until the test closes it (or is killed).
pid_t waiting_child(int* write_end) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[1]);
    char byte;
    while (read(fds[0], &byte, 1) > 0) {
    }
    _exit(0);
  }
  close(fds[0]);
  *write_end = fds[1];
  return pid;
}

TEST(Descendants, NoChildIsNoChild) {
  EXPECT_FALSE(has_children());
  EXPECT_TRUE(children_of_self().empty());
}

TEST(Descendants, ALiveChildAndThenItsZombieAreChildrenUntilReaped) {
  int release = -1;
  const pid_t child = waiting_child(&release);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(has_children());
  EXPECT_EQ(children_of_self(), std::vector<pid_t>{child});
  close(release);  // it exits: a zombie until reaped
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  EXPECT_TRUE(has_children());
  // has_children looked without reaping: the status is still there to take.
  int status = -1;
  EXPECT_EQ(waitpid(child, &status, WNOHANG), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_FALSE(has_children());
}

TEST(Descendants, TheSweepKillsChildrenAndTheOrphansTheyLeave) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int release = -1;
  int grandchild_pipe[2];
  ASSERT_EQ(pipe(grandchild_pipe), 0);
  const pid_t child = fork();
  if (child == 0) {
    // Leaves a grandchild behind and exits: the grandchild, which waits for ever, is
    // re-parented to the test.
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      for (;;) pause();
    }
    (void)!write(grandchild_pipe[1], &grandchild, sizeof grandchild);
    _exit(0);
  }
  pid_t grandchild = 0;
  ASSERT_EQ(read(grandchild_pipe[0], &grandchild, sizeof grandchild),
            static_cast<ssize_t>(sizeof grandchild));
  close(grandchild_pipe[0]);
  close(grandchild_pipe[1]);
  const pid_t other = waiting_child(&release);
  std::vector<pid_t> reaped;
  std::vector<int> statuses;
  kill_all_descendants([&](pid_t pid, int status) {
    reaped.push_back(pid);
    if (pid == grandchild) statuses.push_back(status);
  });
  std::sort(reaped.begin(), reaped.end());
  std::vector<pid_t> expected{child, grandchild, other};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(reaped, expected);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_TRUE(WIFSIGNALED(statuses[0]) && WTERMSIG(statuses[0]) == SIGKILL);
  EXPECT_FALSE(has_children());
  close(release);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace
}  // namespace aml

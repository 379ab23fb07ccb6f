#include "supervisor/guardian.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>

#include "supervisor/console.hpp"
#include "supervisor/descendants.hpp"
#include "supervisor/exit_status.hpp"
#include "util/unique_fd.hpp"

namespace aml {
namespace {

constexpr int kPassedOn[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

pid_t guardian_pid = 0;  // in the supervisor: its guardian's (0: none, unguarded)

// Its last word: a stderr that nobody reads gets a second, not the guardian's life.
void say(const std::string& text) { write_within(STDERR_FILENO, text, std::chrono::seconds(1)); }

// The guardian's life: pass signals on, wait for the supervisor, then leave nothing behind.
[[noreturn]] void guard(pid_t supervisor, int signal_fd) {
  signal(SIGPIPE, SIG_IGN);  // a console gone away must not cost the exit status
  int status = 0;
  bool ended = false;
  std::uint64_t passed_on = 0;  // bit N: signal N was passed on to the supervisor
  while (!ended) {
    signalfd_siginfo info;
    ssize_t n = read(signal_fd, &info, sizeof(info));
    if (n != sizeof(info)) {
      if (n < 0 && errno != EINTR) break;  // cannot happen with a valid signalfd
      continue;
    }
    int sig = static_cast<int>(info.ssi_signo);
    if (sig != SIGCHLD) {
      // The original sender goes along, for the supervisor's report of the stop.
      sigval value{};
      value.sival_int = static_cast<int>(info.ssi_pid);
      sigqueue(supervisor, sig, value);
      passed_on |= 1ull << sig;
      continue;
    }
    // Orphans re-parented here once the supervisor is gone are reaped too; only the
    // supervisor's status counts.
    pid_t reaped;
    int reaped_status = 0;
    while ((reaped = waitpid(-1, &reaped_status, WNOHANG)) > 0) {
      if (reaped != supervisor) continue;
      status = reaped_status;
      ended = true;
    }
  }
  int left = 0;
  kill_all_descendants([&left](pid_t, int) { ++left; });
  // Ended by a signal from outside that reached it after its workers were done: the stop it
  // asked for, nothing to explain.
  if (WIFSIGNALED(status) && (passed_on & (1ull << WTERMSIG(status))) == 0) {
    say("aml-launch: its supervisor (pid " + std::to_string(supervisor) + ") was killed by " +
        describe_wait_status(status) + "; its guardian ended the " + std::to_string(left) +
        " process(es) it left: nothing it started is left\n");
  }
  _exit(exit_code_of(status));
}

}  // namespace

int guardian_lost_signal() { return SIGRTMIN + 1; }

bool hangup_of_orphaned_group(int sig, int code) {
  return sig == SIGHUP && code == SI_KERNEL && guardian_pid != 0 && getppid() != guardian_pid;
}

SignalOrigin signal_origin(long sender, int code, int value) {
  // Passed on: the guardian's value is the original sender, 0 where it did not know either
  // (the kernel's: a terminal's Ctrl-C).
  if (code == SI_QUEUE && sender == getppid()) return {value, true};
  return {sender, false};
}

bool DuplicateSignals::is_copy(int sig, const SignalOrigin& origin) {
  const auto now = std::chrono::steady_clock::now();
  const bool copy = sig == last_signal_ && origin.sender == last_origin_.sender &&
                    origin.passed_on != last_origin_.passed_on &&
                    now - last_time_ < std::chrono::seconds(2);
  // A copy pairs with one signal only: the next one of the same kind is new again.
  last_signal_ = copy ? 0 : sig;
  last_origin_ = origin;
  last_time_ = now;
  return copy;
}

std::optional<int> split_off_supervisor() {
  if (getpid() == 1) return std::nullopt;
  sigset_t passed, original;
  sigemptyset(&passed);
  sigaddset(&passed, SIGCHLD);
  for (int sig : kPassedOn) sigaddset(&passed, sig);
  // Blocked before the split, so that no signal meant for the job is lost in between.
  sigprocmask(SIG_BLOCK, &passed, &original);
  UniqueFd signal_fd(signalfd(-1, &passed, SFD_CLOEXEC));
  if (!signal_fd || prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    sigprocmask(SIG_SETMASK, &original, nullptr);
    return std::nullopt;
  }
  const pid_t guardian = getpid();
  pid_t child = fork();
  if (child < 0) {
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    sigprocmask(SIG_SETMASK, &original, nullptr);
    return std::nullopt;
  }
  if (child > 0) guard(child, signal_fd.get());

  // The supervisor: out of the guardian's process group, so that a SIGKILL sent to that group
  // leaves one of the two alive; told when the guardian dies.
  signal_fd.reset();
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, guardian_lost_signal());
  // The guardian may have died before PR_SET_PDEATHSIG took effect: no worker runs yet.
  if (getppid() != guardian) _exit(128 + SIGKILL);
  guardian_pid = guardian;
  sigprocmask(SIG_SETMASK, &original, nullptr);
  return std::nullopt;
}

}  // namespace aml

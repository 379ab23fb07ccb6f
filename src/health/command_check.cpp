// The user's own check (--health-command), as Slurm's HealthCheckProgram: run by /bin/sh -c,
// exit 0 is healthy; its last lines of output are the reason it gives. Bounded: at the bound
// its process group is killed and the check fails saying so.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "health/health_checks.hpp"
#include "util/seconds_text.hpp"

extern char** environ;

namespace aml {
namespace {

// The last `lines` non-empty lines of the output, joined with " | ".
std::string last_lines(const std::string& output, int lines) {
  std::vector<std::string> kept;
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    if (end > start) kept.push_back(output.substr(start, end - start));
    start = end + 1;
  }
  std::string text;
  const std::size_t first = kept.size() > static_cast<std::size_t>(lines) ? kept.size() - lines : 0;
  for (std::size_t i = first; i < kept.size(); ++i) text += (i > first ? " | " : "") + kept[i];
  return text;
}

}  // namespace

HealthResult check_command(const HealthSettings& settings) {
  HealthResult result{"command", false, "", 0};
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    result.figure = std::string("cannot run: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own group: killed whole at the bound
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  const char* argv[] = {"/bin/sh", "-c", settings.health_command.c_str(), nullptr};
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, "/bin/sh", &actions, &attributes, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    result.figure = std::string("cannot run /bin/sh: ") + std::strerror(spawned);
    return result;
  }
  const auto deadline = std::chrono::steady_clock::now() + settings.bound;
  std::string output;
  bool timed_out = false;
  // Read until the command ends (a child it left behind may hold the pipe: it does not count)
  // or the bound; its end is seen without reaping it (WNOWAIT), so that its process group is
  // still its own when what it left there is killed.
  auto ended = [pid] {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | WNOHANG) == 0 &&
           info.si_pid == pid;
  };
  bool open_pipe = true;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const bool done = ended();
    if (!done && left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (!open_pipe) {
      if (done) break;
      usleep(5000);
      continue;
    }
    pollfd readable{out[0], POLLIN, 0};
    const int ready =
        poll(&readable, 1, done ? 0 : static_cast<int>(std::min<long long>(left.count(), 50)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      if (done) break;  // ended, and nothing more to read now
      continue;
    }
    char buffer[4096];
    const ssize_t got = read(out[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      open_pipe = false;  // every writer closed it
      continue;
    }
    output.append(buffer, static_cast<std::size_t>(got));
    if (output.size() > 65536) output.erase(0, output.size() - 65536);
  }
  close(out[0]);
  if (timed_out) {
    kill(-pid, SIGKILL);
    siginfo_t info{};
    while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
  }
  kill(-pid, SIGKILL);  // whatever it left behind in its group
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string said = last_lines(output, 3);
  if (timed_out) {
    result.figure = "did not end within --health-timeout " + seconds_text(settings.bound);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    result.ok = true;
    result.figure = "exit 0" + (said.empty() ? "" : ": " + said);
  } else {
    result.figure = (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                       : "killed by signal " + std::to_string(WTERMSIG(status))) +
                    (said.empty() ? "" : ": " + said);
  }
  return result;
}

}  // namespace aml

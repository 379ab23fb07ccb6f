#include "supervisor/stack_collection.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "supervisor/proc_state.hpp"
#include "supervisor/spawn.hpp"

extern char** environ;

namespace aml {
namespace {

using Clock = std::chrono::steady_clock;

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

struct Running {
  pid_t pid = -1;
  int out = -1;
  std::string text;
};

// Starts argv with stdout and stderr into one pipe, default signals and an empty mask (the
// launcher blocks the signals it reads from its signalfd).
Running start(const std::vector<std::string>& argv) {
  Running r;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ) == 0) r.pid = pid;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (r.pid < 0) {
    close(fds[0]);
    return r;
  }
  r.out = fds[0];
  return r;
}

// Reads every running tool's output until each ends or the deadline; then kills what is left
// and reaps them all.
void finish_all(std::vector<Running>& tools, Clock::time_point deadline) {
  while (true) {
    std::vector<pollfd> fds;
    std::vector<Running*> owners;
    for (Running& t : tools) {
      if (t.out < 0) continue;
      fds.push_back({t.out, POLLIN, 0});
      owners.push_back(&t);
    }
    if (fds.empty()) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      char buffer[16384];
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0 && owners[i]->text.size() < (4u << 20)) {
        owners[i]->text.append(buffer, static_cast<std::size_t>(n));
      } else if (n <= 0) {
        close(owners[i]->out);
        owners[i]->out = -1;
      }
    }
  }
  for (Running& t : tools) {
    if (t.out >= 0) {
      close(t.out);
      t.out = -1;
      t.text += "\n(aml-launch: stopped after its time limit)\n";
    }
    if (t.pid > 0) {
      kill(t.pid, SIGKILL);  // gone already, or over its time
      int status;
      waitpid(t.pid, &status, 0);
    }
  }
}

std::string shortened(const std::string& function, const std::string& file,
                      const std::string& line) {
  return function + " (" + base_name(file) + ":" + line + ")";
}

}  // namespace

StackTools StackTools::find() {
  auto py_spy = find_program("py-spy");
  auto gdb = find_program("gdb");
  return StackTools{py_spy ? *py_spy : "", gdb ? *gdb : ""};
}

pid_t rank_process(pid_t worker) {
  pid_t pid = worker;
  for (int depth = 0; depth < 8; ++depth) {
    ProcState state = read_proc_state(pid);
    const std::string name = state.comm;
    if (name != "sh" && name != "bash" && name != "dash" && name != "env") return pid;
    std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) +
                           "/children");
    pid_t child = 0;
    if (!(children >> child) || child <= 0) return pid;
    pid = child;
  }
  return pid;
}

std::vector<RankStacks> collect_stacks(const std::vector<pid_t>& pids,
                                       const std::vector<bool>& python, const StackTools& tools,
                                       std::chrono::milliseconds limit) {
  std::vector<RankStacks> stacks(pids.size());
  if (!tools.py_spy.empty()) {
    std::vector<Running> running(pids.size());
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (python[i]) running[i] = start({tools.py_spy, "dump", "--pid", std::to_string(pids[i])});
    }
    finish_all(running, Clock::now() + limit);
    for (std::size_t i = 0; i < pids.size(); ++i) stacks[i].python = running[i].text;
  }
  if (!tools.gdb.empty()) {
    std::vector<Running> running(pids.size());
    for (std::size_t i = 0; i < pids.size(); ++i) {
      running[i] = start({tools.gdb, "-nx", "-batch", "-p", std::to_string(pids[i]), "-ex",
                          "set pagination off", "-ex", "thread apply all bt"});
    }
    finish_all(running, Clock::now() + limit);
    for (std::size_t i = 0; i < pids.size(); ++i) stacks[i].native = running[i].text;
  }
  return stacks;
}

std::string place_from_py_spy(const std::string& dump) {
  // Thread 4242 (idle): "MainThread"
  //     load_batch (/work/train.py:9)
  std::istringstream lines(dump);
  std::string line;
  bool main_thread = false;
  static const std::regex frame(R"(^\s+(\S.*?) \((.*):(\d+)\)\s*$)");
  std::smatch m;
  while (std::getline(lines, line)) {
    if (line.rfind("Thread ", 0) == 0) {
      main_thread = line.find("\"MainThread\"") != std::string::npos;
      continue;
    }
    if (main_thread && std::regex_match(line, m, frame)) return shortened(m[1], m[2], m[3]);
  }
  return "";
}

std::string place_from_faulthandler(const std::string& text) {
  // Current thread 0x00007f... (most recent call first):
  //   File "/work/train.py", line 9 in load_batch
  // The thread that took the signal is the main thread (the kernel's first choice); where
  // the text names none current, the first thread listed.
  static const std::regex frame(R"re(^\s+File "(.*)", line (\d+) in (\S+)\s*$)re");
  std::istringstream lines(text);
  std::string line, first;
  bool current = false;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (line.rfind("Current thread ", 0) == 0) {
      current = true;
      continue;
    }
    if (line.rfind("Thread ", 0) == 0) {
      current = false;
      continue;
    }
    if (!std::regex_match(line, m, frame)) continue;
    std::string place = shortened(m[3], m[1], m[2]);
    if (current) return place;
    if (first.empty()) first = place;
    current = false;
  }
  return first;
}

std::string place_from_gdb(const std::string& backtrace) {
  // Thread 1 (Thread 0x7f... (LWP 42) "worker"):
  // #0  0x00007f... in __GI___libc_read (fd=3, ...) at ../sysdeps/unix/sysv/linux/read.c:26
  // #1  0x0000555... in main () at blocked.c:12
  // Thread 1 is the main thread; gdb lists the threads highest first.
  std::istringstream lines(backtrace);
  std::string line;
  bool main_thread = false;
  bool single = backtrace.find("\nThread ") == std::string::npos;
  static const std::regex frame(
      R"(^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S+) \(.*?\)(?: at (\S+):(\d+))?)");
  std::smatch m;
  std::string innermost;
  while (std::getline(lines, line)) {
    if (line.rfind("Thread ", 0) == 0) {
      if (main_thread && !innermost.empty()) break;
      main_thread = line.rfind("Thread 1 ", 0) == 0;
      continue;
    }
    // C++ names: "(anonymous namespace)::f" is f to a reader.
    for (std::size_t at; (at = line.find("(anonymous namespace)::")) != std::string::npos;) {
      line.erase(at, std::strlen("(anonymous namespace)::"));
    }
    if (!(main_thread || single) || !std::regex_search(line, m, frame)) continue;
    std::string function = m[2];
    // __GI___clock_nanosleep, __libc_read: glibc's inner names for what was called.
    for (bool stripped = true; stripped;) {
      stripped = false;
      for (const char* prefix : {"__GI_", "__libc_", "_"}) {
        if (function.rfind(prefix, 0) == 0 && function.size() > std::strlen(prefix)) {
          function = function.substr(std::strlen(prefix));
          stripped = true;
        }
      }
    }
    const bool has_source = m[3].matched && m[3].str().find("sysdeps") == std::string::npos;
    if (innermost.empty()) {
      innermost = function;
      if (has_source) return shortened(function, m[3], m[4]);
      continue;
    }
    if (has_source) return innermost + " < " + shortened(function, m[3], m[4]);
  }
  return innermost;
}

}  // namespace aml

#include "supervisor/stack_collection.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "supervisor/proc_state.hpp"
#include "supervisor/spawn.hpp"

namespace aml {
namespace {

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

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

std::vector<std::string> py_spy_command(const StackTools& tools, pid_t pid) {
  return {tools.py_spy, "dump", "--pid", std::to_string(pid)};
}

std::vector<std::string> gdb_command(const StackTools& tools, pid_t pid) {
  return {tools.gdb,
          "-nx",
          "-batch",
          "-p",
          std::to_string(pid),
          "-ex",
          "set pagination off",
          "-ex",
          "thread apply all bt"};
}

std::string main_thread_frames(const std::string& dump) {
  // Only the frames: the thread's header says "(idle)" or "(active)" as it goes.
  std::istringstream lines(dump);
  std::string line, frames;
  bool main_thread = false;
  while (std::getline(lines, line)) {
    if (line.rfind("Thread ", 0) == 0) {
      main_thread = line.find("\"MainThread\"") != std::string::npos;
      continue;
    }
    if (main_thread && line.rfind("    ", 0) == 0) frames += line + "\n";
  }
  return frames;
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

#include "supervisor/descendants.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "util/unique_fd.hpp"

namespace aml {
namespace {

// /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
pid_t parent_of(const char* pid) {
  std::ifstream stat(std::string("/proc/") + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return -1;
  std::size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 1));
  char state;
  pid_t ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

}  // namespace

std::vector<pid_t> children_of_self() {
  std::vector<pid_t> children;
  const pid_t self = getpid();
  // The kernel's own list, when it keeps one (CONFIG_PROC_CHILDREN): read with plain calls,
  // as every launch ends here (a stream costs a locale).
  const std::string list_path = "/proc/self/task/" + std::to_string(self) + "/children";
  if (UniqueFd list{open(list_path.c_str(), O_RDONLY | O_CLOEXEC)}) {
    std::string text;
    char buffer[4096];
    ssize_t got;
    while ((got = read(list.get(), buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR)) {
      if (got > 0) text.append(buffer, static_cast<std::size_t>(got));
    }
    for (const char* at = text.c_str();;) {
      char* end = nullptr;
      const long pid = std::strtol(at, &end, 10);
      if (end == at) break;
      children.push_back(static_cast<pid_t>(pid));
      at = end;
    }
    return children;
  }
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    if (parent_of(entry->d_name) == self) children.push_back(std::atoi(entry->d_name));
  }
  closedir(proc);
  return children;
}

}  // namespace aml

namespace aml {

bool has_children() {
  // WNOWAIT: a zombie child is looked at, not reaped; ECHILD only where there is none at all
  // (of any thread of this process, whatever its exit signal).
  siginfo_t info{};
  return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 || errno != ECHILD;
}

void kill_all_descendants(const std::function<void(pid_t, int)>& on_reaped) {
  // Every launch ends here: with no child left, the kernel's word is enough.
  if (!has_children()) return;
  // Bounded so that a fork bomb cannot keep the launcher here for ever.
  for (int round = 0; round < 10000; ++round) {
    std::vector<pid_t> children = children_of_self();
    if (children.empty()) return;
    for (pid_t child : children) kill(child, SIGKILL);
    for (pid_t child : children) {
      int status = 0;
      pid_t reaped;
      do {
        reaped = waitpid(child, &status, 0);
      } while (reaped < 0 && errno == EINTR);
      if (reaped == child) on_reaped(child, status);
    }
  }
}

}  // namespace aml

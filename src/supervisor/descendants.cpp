#include "supervisor/descendants.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

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
  // The kernel's own list, when it keeps one (CONFIG_PROC_CHILDREN).
  std::ifstream list("/proc/self/task/" + std::to_string(self) + "/children");
  if (list) {
    pid_t pid;
    while (list >> pid) children.push_back(pid);
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

void kill_all_descendants(const std::function<void(pid_t, int)>& on_reaped) {
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

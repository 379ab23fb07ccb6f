#include "supervisor/proc_state.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace aml {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string state_name(char state) {
  switch (state) {
    case 'R':
      return "R (running)";
    case 'S':
      return "S (sleeping)";
    case 'D':
      return "D (disk sleep)";
    case 'T':
      return "T (stopped)";
    case 't':
      return "t (tracing stop)";
    case 'Z':
      return "Z (zombie)";
    default:
      return std::string(1, state);
  }
}

}  // namespace

namespace {

// "pid (comm) S ppid ...": the name may hold spaces and parentheses; the fields follow the
// last ')'. False when the text is not a stat line.
bool parse_stat(const std::string& stat, ProcState& p) {
  const std::size_t open = stat.find('(');
  const std::size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  p.found = true;
  p.comm = stat.substr(open + 1, close - open - 1);
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state (proc(5) numbering)
    if (i == 3) p.state = field.empty() ? '?' : field[0];
    if (i == 14 || i == 15) p.cpu_ticks += std::atoll(field.c_str());
    if (i == 16 || i == 17) p.reaped_children_cpu_ticks += std::atoll(field.c_str());
    if (i == 20) p.threads = std::atoi(field.c_str());
    if (i == 24) p.resident_pages = std::atoll(field.c_str());
  }
  return true;
}

}  // namespace

long long main_thread_cpu_ticks(pid_t pid) {
  ProcState p;
  const std::string id = std::to_string(pid);
  if (!parse_stat(read_text("/proc/" + id + "/task/" + id + "/stat"), p)) return -1;
  return p.cpu_ticks;
}

ProcState read_proc_stat(const std::string& pid) {
  ProcState p;
  parse_stat(read_text("/proc/" + pid + "/stat"), p);
  return p;
}

double resident_bytes(const ProcState& p) {
  static const long page = sysconf(_SC_PAGESIZE);
  return static_cast<double>(p.resident_pages) * static_cast<double>(page);
}

ProcState read_proc_state(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/";
  ProcState p = read_proc_stat(std::to_string(pid));
  if (!p.found) return p;
  p.wchan = read_text(dir + "wchan");
  if (p.wchan == "0") p.wchan.clear();
  char exe[4096];
  ssize_t n = readlink((dir + "exe").c_str(), exe, sizeof(exe) - 1);
  if (n > 0) p.exe.assign(exe, static_cast<std::size_t>(n));
  p.kernel_stack = read_text(dir + "stack");
  return p;
}

double ticks_to_seconds(long long ticks) {
  static const long hz = sysconf(_SC_CLK_TCK);
  return static_cast<double>(ticks) / static_cast<double>(hz > 0 ? hz : 100);
}

std::string ProcState::describe() const {
  if (!found) return "gone";
  std::string text = state_name(state);
  if (!wchan.empty()) text += " in " + wchan;
  return text + ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

bool ProcState::python() const {
  const std::string name = exe.substr(exe.rfind('/') + 1);
  return name.rfind("python", 0) == 0 || comm.rfind("python", 0) == 0;
}

}  // namespace aml

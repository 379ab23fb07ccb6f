#include "supervisor/exit_status.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <string_view>

namespace aml {

const char* classic_signal_name(int signal) {
  static constexpr std::array<const char*, 32> kNames = {
      "",          "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
      "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
      "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
      "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS"};
  return signal > 0 && signal < static_cast<int>(kNames.size()) ? kNames[signal] : nullptr;
}

std::string signal_name(int signal) {
  if (const char* name = classic_signal_name(signal)) return name;
  if (signal >= SIGRTMIN && signal <= SIGRTMAX) {
    return "SIGRTMIN+" + std::to_string(signal - SIGRTMIN);
  }
  return "SIG?";
}

int signal_number(std::string_view name) {
  if (!name.empty() && name.find_first_not_of("0123456789") == std::string_view::npos) {
    if (name.size() > 2) return 0;
    const int number = std::stoi(std::string(name));
    return number > 0 && number <= SIGRTMAX ? number : 0;
  }
  const std::string wanted =
      name.substr(0, 3) == "SIG" ? std::string(name) : "SIG" + std::string(name);
  for (int sig = 1; sig < 32; ++sig)
    if (signal_name(sig) == wanted) return sig;
  return 0;
}

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int signal = WTERMSIG(wait_status);
    return "signal " + std::to_string(signal) + " (" + signal_name(signal) + ")" +
           (WCOREDUMP(wait_status) ? ", core dumped" : "");
  }
  return "status " + std::to_string(wait_status);
}

}  // namespace aml

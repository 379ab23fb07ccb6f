#include "supervisor/exit_status.hpp"

#include <string.h>
#include <sys/wait.h>

namespace aml {

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int signal = WTERMSIG(wait_status);
    const char* abbrev = sigabbrev_np(signal);
    return "signal " + std::to_string(signal) + " (SIG" + (abbrev ? abbrev : "?") + ")" +
           (WCOREDUMP(wait_status) ? ", core dumped" : "");
  }
  return "status " + std::to_string(wait_status);
}

}  // namespace aml

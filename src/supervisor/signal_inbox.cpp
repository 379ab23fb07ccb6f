#include "supervisor/signal_inbox.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace aml {

void SignalInbox::read_all() {
  signalfd_siginfo info;
  while (read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
    const int sig = static_cast<int>(info.ssi_signo);
    const SignalOrigin origin =
        signal_origin(static_cast<long>(info.ssi_pid), info.ssi_code, info.ssi_int);
    if (sig == SIGCHLD) {
      handlers_.child_ended();
    } else if (sig == guardian_lost_signal()) {
      handlers_.guardian_lost();
    } else if (hangup_of_orphaned_group(sig, info.ssi_code)) {
      continue;  // the guardian's loss, told by guardian_lost_signal()
    } else if (duplicates_.is_copy(sig, origin)) {
      continue;  // sent to the guardian and to this process at once: one signal
    } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      handlers_.stop(sig, origin.sender);
    } else {
      handlers_.pass_on(sig);
    }
  }
}

}  // namespace aml

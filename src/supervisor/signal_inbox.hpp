// Signals to the supervisor, read from its signalfd inside the loop (DESIGN §4): no handler
// runs in the middle of anything. Each is handed on by what it means: a child ended, the
// guardian was lost, a stop from outside (INT, TERM, HUP), or one for the workers.
#pragma once

#include <functional>

#include "supervisor/guardian.hpp"

namespace aml {

class SignalInbox {
 public:
  struct Handlers {
    std::function<void()> child_ended;
    std::function<void()> guardian_lost;
    std::function<void(int sig, long sender)> stop;  // sender 0: unknown (the kernel's)
    std::function<void(int sig)> pass_on;            // QUIT, USR1, USR2: the workers' business
  };

  SignalInbox(int signal_fd, Handlers handlers)
      : signal_fd_(signal_fd), handlers_(std::move(handlers)) {}
  int fd() const { return signal_fd_; }
  // Everything the signalfd holds.
  void read_all();

 private:
  int signal_fd_;
  Handlers handlers_;
  DuplicateSignals duplicates_;
};

}  // namespace aml

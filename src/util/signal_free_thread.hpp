// A thread that takes no signal. Signals are the launcher's main thread's, read from its
// signalfd; a thread that left one unblocked would take it instead, and with SIGCHLD (ignored
// by default) a worker's exit was lost: the supervisor waited for ever on a worker that had
// exited (a health look's thread, begun while the rendezvous ran, was still ending when a
// fast worker exited).
#pragma once

#include <signal.h>

#include <thread>
#include <utility>

namespace aml {

template <typename Function>
std::thread signal_free_thread(Function&& function) {
  sigset_t all, previous;
  sigfillset(&all);
  // Blocked before it starts, so that no signal can land in it before it could block them.
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  std::thread thread(std::forward<Function>(function));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return thread;
}

}  // namespace aml

#include "stop_while_waiting.hpp"

#include <unistd.h>

#include "supervisor/guardian.hpp"
#include "supervisor/job_stops.hpp"
#include "util/signal_free_thread.hpp"

namespace aml {
namespace {

// Sent to the watch's own thread (never to the process) when the wait is over: SIGURG's default
// is to be ignored, so one from outside that reached the main thread would change nothing.
constexpr int kWake = SIGURG;

}  // namespace

StopWhileWaiting::StopWhileWaiting(std::recursive_mutex& lock, int not_a_stop, OnStop on_stop)
    : lock_(lock), on_stop_(std::move(on_stop)) {
  sigset_t stops;
  sigemptyset(&stops);
  for (int sig : kJobStops)
    if (sig != not_a_stop) sigaddset(&stops, sig);
  // Blocked in the main thread (and so in every thread started from it while the wait runs),
  // so that the watch alone takes them.
  pthread_sigmask(SIG_BLOCK, &stops, &previous_);
  taken_ = stops;
  sigaddset(&taken_, kWake);
  thread_ = signal_free_thread([this] { watch(); });
}

StopWhileWaiting::~StopWhileWaiting() {
  ending_ = true;
  pthread_kill(thread_.native_handle(), kWake);
  thread_.join();
  // A stop that came after the watch ended stays pending, held (job_stops.hpp): the round's
  // signalfd tells it.
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void StopWhileWaiting::watch() {
  for (;;) {
    siginfo_t info{};
    const int sig = sigwaitinfo(&taken_, &info);
    if (sig == kWake || (sig < 0 && ending_)) {
      if (ending_) return;
      continue;
    }
    if (sig < 0) continue;  // EINTR
    // The guardian's loss (its own signal ends this process as a lost node), not a stop.
    if (hangup_of_orphaned_group(sig, info.si_code)) continue;
    // The main thread is in the wait (its writes take the lock) or ending the watch (it waits
    // for this thread): nothing else writes while the stop is told.
    std::lock_guard<std::recursive_mutex> held(lock_);
    // Passed on by the guardian: its sender is the one the guardian names, not the guardian.
    const bool from_a_process = info.si_code == SI_USER || info.si_code == SI_QUEUE;
    const SignalOrigin origin = signal_origin(info.si_pid, info.si_code, info.si_value.sival_int);
    on_stop_(sig, from_a_process ? origin.sender : 0);
    _exit(128 + sig);
  }
}

}  // namespace aml

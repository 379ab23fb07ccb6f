// A stop (TERM, INT, HUP, QUIT from outside) while this node waits for a round — a hot spare, a
// benched node, the nodes' first meeting, a regroup — ends the launcher at once, as it always
// did, but now says so as any stop does: the stop and end events, its --summary-file, its line.
// The wait itself (the rendezvous's calls) is not interrupted: a thread of its own takes the
// signal and ends the process, under the lock that the join's own writes (events, the bench,
// its lines) take, so that it never writes beside them. Found by the fault campaign
// (tests/chaos): a spare stopped by the campaign's SIGTERM had left no summary.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace aml {

class StopWhileWaiting {
 public:
  // on_stop(signal, sender pid or 0): what a stop writes; the process ends (128+signal) after it.
  using OnStop = std::function<void(int signal, long sender_pid)>;
  // From now until it is destroyed, the stop signals but `not_a_stop` (the --notice-signal, a
  // notice) are taken by the watch.
  StopWhileWaiting(std::recursive_mutex& lock, int not_a_stop, OnStop on_stop);
  ~StopWhileWaiting();
  StopWhileWaiting(const StopWhileWaiting&) = delete;
  StopWhileWaiting& operator=(const StopWhileWaiting&) = delete;

 private:
  void watch();

  std::recursive_mutex& lock_;
  OnStop on_stop_;
  sigset_t taken_{};     // the stops, and the wake-up of the watch's end
  sigset_t previous_{};  // the main thread's mask before
  std::atomic<bool> ending_{false};
  std::thread thread_;
};

}  // namespace aml

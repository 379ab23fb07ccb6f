// The look at a quiet job's ranks on this node (DESIGN §6), beside the supervisor's loop: the
// tools are child processes and the waits are deadlines, so signals, output and peers go on
// while it looks, and whatever happens meanwhile comes first.
//
// 1. First look: /proc (main thread's CPU time) and py-spy for the Python ranks.
// 2. A moment later, a second look. A rank whose main thread's stack changed, or that used
//    CPU in between, is not stuck: the inquiry is called off (moved()).
// 3. The NCCL Flight Recorder is asked for its dumps (a few seconds), then gdb reads every
//    rank's native stacks; on several nodes every node has looked before any harm is done.
// 4. The Python ranks py-spy could not read get SIGABRT: faulthandler writes their stacks as
//    they die (committed(): from here on the hang is the verdict).
// 5. The places of every rank (on several nodes, every node's) give the verdict: done().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flight/flight_dump.hpp"
#include "supervisor/hang_report.hpp"
#include "supervisor/peer_link.hpp"
#include "supervisor/reactor.hpp"
#include "supervisor/stack_collection.hpp"
#include "supervisor/tool_process.hpp"

namespace aml {

class HangInquiry {
 public:
  using Clock = std::chrono::steady_clock;

  struct Target {
    std::size_t worker = 0;  // its index in the round
    int rank = -1;
    int local_rank = 0;
    int node_rank = 0;
    pid_t worker_pid = 0;
    std::int64_t step = -1;
    double cpu_seconds = 0;
    double interval_seconds = 0;
  };

  struct Settings {
    double timeout_seconds = 0;  // --hang-timeout, for the report
    std::string flight_recorder_pipe_prefix;
    std::string flight_recorder_dump_prefix;
    StackTools tools;
    Clock::duration second_look_after = std::chrono::seconds(1);
    Clock::duration tool_limit = std::chrono::seconds(15);  // each tool, every rank at once
    // A recorder's first dump symbolizes the stacks it recorded: 1.5 s for torch 2.15 here on
    // an idle machine, over 5 s under load; the wait ends once every asked dump is read.
    Clock::duration flight_recorder_wait = std::chrono::seconds(15);
    Clock::duration faulthandler_wait = std::chrono::seconds(5);
    Clock::duration peers_wait = std::chrono::seconds(40);
    Clock::duration freeze_wait = std::chrono::seconds(5);  // for the other nodes' freeze
  };

  // What it needs of the rest of the supervisor.
  struct Hooks {
    // Capture the worker's stderr, then SIGABRT and SIGCONT its rank process (stopped by
    // `freeze`, it dumps its stacks as they were, before it runs again).
    std::function<void(std::size_t worker, pid_t pid)> abort_for_stacks;
    // SIGSTOP: on several nodes every node's ranks are stopped before any is aborted, so that
    // none sees another die (a closed connection) and moves on before its stacks are taken.
    std::function<void(pid_t pid)> freeze;
    // The worker ended and its stderr is read to the end.
    std::function<bool(std::size_t worker)> stacks_written;
    std::function<std::string(std::size_t worker)> captured_stderr;
    PeerLink* peers = nullptr;  // the other nodes; null on one node
  };

  HangInquiry(Reactor& reactor, std::vector<Target> targets, Settings settings, Hooks hooks,
              Clock::time_point now);
  HangInquiry(const HangInquiry&) = delete;
  HangInquiry& operator=(const HangInquiry&) = delete;

  // After every pass of the loop: goes on as far as it can without waiting.
  void advance(Clock::time_point now);
  std::optional<Clock::time_point> deadline() const;
  // A child the supervisor reaped: one of the tools, perhaps.
  void reaped(pid_t pid);

  Clock::time_point started() const { return started_; }
  // Why the ranks are not stuck ("rank 1's stack changed"), once the second look says so.
  const std::optional<std::string>& moved() const { return moved_; }
  bool committed() const { return phase_ >= Phase::freezing; }
  bool done() const { return phase_ == Phase::done; }
  const HangReport& report() const { return report_; }

 private:
  enum class Phase {
    first_look,
    pause,
    second_look,
    flight_recorder,
    native_stacks,
    peers_looked,
    freezing,
    faulthandler,
    pooling,
    done
  };
  void start_py_spy();
  bool tools_done(Clock::time_point now);
  void compare_looks(Clock::time_point now);
  void request_flight_recorder(Clock::time_point now);
  bool flight_recorder_done(Clock::time_point now);
  bool ask_for_dump(std::size_t i);
  void read_dump(std::size_t i);
  void start_gdb();
  bool aborts(std::size_t i) const;
  void freeze_python_ranks(Clock::time_point now);
  void abort_python_ranks(Clock::time_point now);
  void finish(Clock::time_point now);

  Reactor& reactor_;
  std::vector<Target> targets_;
  Settings settings_;
  Hooks hooks_;
  std::vector<RankLook> looks_;  // by target
  std::vector<bool> python_;
  std::vector<long long> main_cpu_;  // main thread's ticks at the first look
  std::vector<std::string> frames_;  // main thread's frames at the first look (py-spy)
  std::vector<std::unique_ptr<ToolProcess>> tools_;  // by target, the tool running now
  std::vector<std::size_t> aborted_;                 // targets given SIGABRT
  std::vector<FlightDump> dumps_;      // by target, its flight recorder (none: no pipes)
  std::vector<bool> pipe_unanswered_;  // by target: its pipe is there, nobody reads it yet
  Phase phase_ = Phase::first_look;
  Clock::time_point started_;
  Clock::time_point first_look_at_;
  Clock::time_point phase_deadline_;
  std::optional<std::string> moved_;
  HangReport report_;
};

}  // namespace aml

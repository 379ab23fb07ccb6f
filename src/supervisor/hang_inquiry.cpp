#include "supervisor/hang_inquiry.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "supervisor/stack_collection.hpp"

namespace aml {
namespace {

// Each tool (py-spy, gdb) gets this long for all ranks at once.
constexpr std::chrono::seconds kToolLimit{15};
// The Python ranks given SIGABRT get this long to write their stacks and die.
constexpr std::chrono::seconds kFaulthandlerWait{5};
constexpr std::chrono::seconds kFlightRecorderWait{5};

}  // namespace

int request_flight_recorder_dumps(const std::string& pipe_prefix, const std::string& dump_prefix,
                                  const std::vector<int>& ranks) {
  if (pipe_prefix.empty()) return 0;
  std::vector<std::string> dumps;
  for (int rank : ranks) {
    const std::string pipe = pipe_prefix + std::to_string(rank) + ".pipe";
    // Non-blocking: no reader (no PyTorch NCCL there) is ENXIO, not a wait.
    int fd = open(pipe.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    if (write(fd, "1\n", 2) == 2) dumps.push_back(dump_prefix + std::to_string(rank));
    close(fd);
  }
  // The dumps come from a thread of each rank's own: before the tools pause the ranks and
  // SIGABRT ends them, a few seconds for the dumps to be there.
  const auto deadline = std::chrono::steady_clock::now() + kFlightRecorderWait;
  for (const std::string& dump : dumps) {
    while (access(dump.c_str(), F_OK) != 0 && std::chrono::steady_clock::now() < deadline) {
      usleep(20000);
    }
  }
  return static_cast<int>(dumps.size());
}

HangInquiry::HangInquiry(std::vector<Target> targets, double timeout_seconds,
                         const std::string& flight_recorder_pipe_prefix,
                         const std::string& flight_recorder_dump_prefix)
    : targets_(std::move(targets)), timeout_seconds_(timeout_seconds) {
  std::vector<pid_t> pids;
  std::vector<bool> python;
  std::vector<int> ranks;
  for (const Target& t : targets_) {
    RankLook look;
    look.rank = t.rank;
    look.local_rank = t.local_rank;
    look.node_rank = t.node_rank;
    look.pid = rank_process(t.worker_pid);
    look.proc = read_proc_state(look.pid);
    look.step = t.step;
    look.cpu_seconds = t.cpu_seconds;
    look.interval_seconds = t.interval_seconds;
    pids.push_back(look.pid);
    python.push_back(look.proc.python());
    ranks.push_back(t.rank);
    looks_.push_back(std::move(look));
  }
  // Before the tools stop the processes: the Flight Recorder dumps from a thread of its own.
  request_flight_recorder_dumps(flight_recorder_pipe_prefix, flight_recorder_dump_prefix, ranks);
  const StackTools tools = StackTools::find();
  std::vector<RankStacks> stacks = collect_stacks(pids, python, tools, kToolLimit);
  for (std::size_t i = 0; i < looks_.size(); ++i) {
    RankLook& look = looks_[i];
    look.native_stacks = stacks[i].native;
    if (!place_from_py_spy(stacks[i].python).empty()) {
      look.python_stacks = stacks[i].python;
      look.python_from = "py-spy";
    } else if (python[i]) {
      if (!stacks[i].python.empty()) look.native_stacks += "\n(py-spy: " + stacks[i].python + ")";
      aborts_.push_back({targets_[i].worker, look.pid});
    }
    look.place = place_of(look);
  }
  deadline_ = Clock::now() + kFaulthandlerWait;
}

void HangInquiry::restart_faulthandler_clock() { deadline_ = Clock::now() + kFaulthandlerWait; }

void HangInquiry::faulthandler_text(std::size_t worker, std::string text) {
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    if (targets_[i].worker != worker) continue;
    looks_[i].python_stacks = std::move(text);
    looks_[i].python_from = "faulthandler";
    looks_[i].place = place_of(looks_[i]);
  }
}

HangReport HangInquiry::report() const {
  HangReport report;
  report.timeout_seconds = timeout_seconds_;
  report.ranks = looks_;
  for (const RankLook& look : looks_) report.places.push_back(look.digest());
  report.verdict = hang_verdict(report.places);
  return report;
}

}  // namespace aml

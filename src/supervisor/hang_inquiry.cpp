#include "supervisor/hang_inquiry.hpp"

#include <cstdio>
#include <fstream>

namespace aml {
namespace {

// How often the waits that have no event of their own (a dump file, the other nodes) look.
constexpr std::chrono::milliseconds kPoll{50};
// A rank whose main thread ran this share of the time between the two looks is working.
constexpr double kBusyShare = 0.2;

// Whether the process has PyTorch loaded: one whose recorder did not answer is said to be so.
bool maps_torch(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("/libtorch") != std::string::npos) return true;
  }
  return false;
}

std::string seconds_to_tenths(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", s);
  return text;
}

}  // namespace

HangInquiry::HangInquiry(Reactor& reactor, std::vector<Target> targets, Settings settings,
                         Hooks hooks, Clock::time_point now)
    : reactor_(reactor),
      targets_(std::move(targets)),
      settings_(std::move(settings)),
      hooks_(std::move(hooks)),
      started_(now),
      first_look_at_(now) {
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
    python_.push_back(look.proc.python());
    main_cpu_.push_back(main_thread_cpu_ticks(look.pid));
    looks_.push_back(std::move(look));
  }
  frames_.resize(targets_.size());
  tools_.resize(targets_.size());
  start_py_spy();
}

void HangInquiry::start_py_spy() {
  phase_deadline_ = Clock::now() + settings_.tool_limit;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    tools_[i].reset();
    const bool first = phase_ == Phase::first_look;
    if (settings_.tools.py_spy.empty() || !python_[i] || (!first && frames_[i].empty())) continue;
    tools_[i] = std::make_unique<ToolProcess>(
        reactor_, py_spy_command(settings_.tools, looks_[i].pid), phase_deadline_);
  }
}

bool HangInquiry::tools_done(Clock::time_point now) {
  bool done = true;
  for (auto& tool : tools_) {
    if (!tool) continue;
    tool->tick(now);
    done = done && tool->done();
  }
  return done;
}

void HangInquiry::reaped(pid_t pid) {
  for (auto& tool : tools_) {
    if (tool && tool->pid() == pid) tool->reaped();
  }
}

void HangInquiry::advance(Clock::time_point now) {
  while (phase_ != Phase::done && !moved_) {
    switch (phase_) {
      case Phase::first_look:
        if (!tools_done(now)) return;
        for (std::size_t i = 0; i < targets_.size(); ++i) {
          if (!tools_[i]) continue;
          looks_[i].python_stacks = tools_[i]->text();
          frames_[i] = main_thread_frames(tools_[i]->text());
        }
        phase_ = Phase::pause;
        phase_deadline_ = now + settings_.second_look_after;
        break;
      case Phase::pause:
        if (now < phase_deadline_) return;
        phase_ = Phase::second_look;
        start_py_spy();
        break;
      case Phase::second_look:
        if (!tools_done(now)) return;
        compare_looks(now);
        if (moved_) return;
        request_flight_recorder(now);
        phase_ = Phase::flight_recorder;
        break;
      case Phase::flight_recorder:
        if (!flight_recorder_done(now)) return;
        start_gdb();
        phase_ = Phase::native_stacks;
        break;
      case Phase::native_stacks:
        if (!tools_done(now)) return;
        for (std::size_t i = 0; i < targets_.size(); ++i) {
          if (tools_[i]) looks_[i].native_stacks = tools_[i]->text();
        }
        if (hooks_.peers != nullptr) hooks_.peers->looked();
        phase_deadline_ = now + settings_.peers_wait;
        phase_ = Phase::peers_looked;
        break;
      case Phase::peers_looked:
        if (hooks_.peers != nullptr && !hooks_.peers->job_still_quiet()) {
          moved_ = "ranks on another node moved";
          return;
        }
        if (hooks_.peers != nullptr && now < phase_deadline_ && !hooks_.peers->everyone_looked()) {
          return;
        }
        if (hooks_.peers != nullptr && !hooks_.peers->commit_hang()) {
          moved_ = "another node called it off (its ranks moved)";
          return;
        }
        freeze_python_ranks(now);
        phase_ = Phase::freezing;
        break;
      case Phase::freezing:
        if (hooks_.peers != nullptr && now < phase_deadline_ && !hooks_.peers->everyone_frozen()) {
          return;
        }
        abort_python_ranks(now);
        phase_ = Phase::faulthandler;
        break;
      case Phase::faulthandler:
        for (std::size_t i : aborted_) {
          if (now < phase_deadline_ && !hooks_.stacks_written(targets_[i].worker)) return;
        }
        finish(now);
        break;
      case Phase::pooling: {
        auto all = hooks_.peers->pooled_places(now >= phase_deadline_);
        if (!all) return;
        report_.places = std::move(*all);
        report_.decide();
        phase_ = Phase::done;
        break;
      }
      case Phase::done:
        return;
    }
  }
}

// Two looks a moment apart: a stack that changed, or CPU used in between, is a rank at work.
void HangInquiry::compare_looks(Clock::time_point now) {
  const double gap = std::chrono::duration<double>(now - first_look_at_).count();
  for (std::size_t i = 0; i < targets_.size() && !moved_; ++i) {
    const std::string rank = "rank " + std::to_string(targets_[i].rank);
    if (tools_[i]) {
      const std::string frames = main_thread_frames(tools_[i]->text());
      if (!frames.empty()) looks_[i].python_stacks = tools_[i]->text();
      if (!frames.empty() && frames != frames_[i]) moved_ = rank + "'s stack changed";
    }
    if (moved_) break;
    const long long ticks = main_thread_cpu_ticks(looks_[i].pid);
    if (ticks < 0) {
      moved_ = rank + " ended";
    } else if (main_cpu_[i] >= 0) {
      const double used = ticks_to_seconds(ticks - main_cpu_[i]);
      if (used >= kBusyShare * gap) {
        moved_ =
            rank + " used CPU (" + seconds_to_tenths(used) + " in " + seconds_to_tenths(gap) + ")";
      }
    }
  }
}

void HangInquiry::request_flight_recorder(Clock::time_point now) {
  phase_deadline_ = now + settings_.flight_recorder_wait;
  dumps_.clear();
  pipe_unanswered_.assign(targets_.size(), false);
  if (settings_.flight_recorder_pipe_prefix.empty()) return;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    const std::string rank = std::to_string(targets_[i].rank);
    dumps_.emplace_back(settings_.flight_recorder_pipe_prefix + rank + ".pipe",
                        settings_.flight_recorder_dump_prefix + rank);
    if (ask_for_dump(i)) continue;
    if (maps_torch(looks_[i].pid))
      looks_[i].collectives.status = RankCollectives::Status::no_recorder;
  }
}

// False where nobody reads the rank's pipe. A pipe that is there but unread is asked again
// until the wait ends: its reader is a thread blocked in open(), and py-spy's look a moment
// ago interrupted that open; on a loaded machine it is back in it only later.
bool HangInquiry::ask_for_dump(std::size_t i) {
  const FlightDump::Asked asked = dumps_[i].ask();
  pipe_unanswered_[i] = asked == FlightDump::Asked::unanswered;
  if (asked != FlightDump::Asked::yes) return false;
  if (dumps_[i].asked()) looks_[i].collectives.status = RankCollectives::Status::no_dump;
  return true;
}

// The dumps come from a thread of each rank's own: before gdb pauses the ranks and SIGABRT
// ends them, a few seconds for the dumps to be there, and read (one written in place may be
// seen half-written: it is read again as it grows).
bool HangInquiry::flight_recorder_done(Clock::time_point now) {
  bool all = true;
  for (std::size_t i = 0; i < dumps_.size(); ++i) {
    if (pipe_unanswered_[i]) {
      all = false;
      if (!ask_for_dump(i)) {
        // Made by a recorder that never came back to it: said as one that did not answer.
        if (now >= phase_deadline_)
          looks_[i].collectives.status = RankCollectives::Status::no_recorder;
        continue;
      }
    }
    if (!dumps_[i].asked() || looks_[i].collectives.status == RankCollectives::Status::read)
      continue;
    read_dump(i);
    all = all && looks_[i].collectives.status == RankCollectives::Status::read;
  }
  return all || now >= phase_deadline_;
}

void HangInquiry::read_dump(std::size_t i) {
  RankCollectives& mine = looks_[i].collectives;
  auto value = dumps_[i].read_if_grown();
  if (!value) return;
  auto digest =
      *value ? digest_flight_dump(**value) : Result<std::vector<GroupDigest>>(value->error());
  if (!digest) {
    mine.status = RankCollectives::Status::unreadable;
    mine.why = dumps_[i].path() + ": " + digest.error().expected;
    return;
  }
  mine.status = RankCollectives::Status::read;
  mine.why.clear();
  mine.groups = std::move(*digest);
}

void HangInquiry::start_gdb() {
  phase_deadline_ = Clock::now() + settings_.tool_limit;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    tools_[i].reset();
    if (settings_.tools.gdb.empty()) continue;
    tools_[i] = std::make_unique<ToolProcess>(reactor_, gdb_command(settings_.tools, looks_[i].pid),
                                              phase_deadline_);
  }
}

// The Python ranks py-spy could not read: faulthandler writes their stacks as they die.
// A Python rank without py-spy's stacks gives them through faulthandler, at the cost of its life.
bool HangInquiry::aborts(std::size_t i) const {
  return python_[i] && place_from_py_spy(looks_[i].python_stacks).empty();
}

void HangInquiry::freeze_python_ranks(Clock::time_point now) {
  phase_deadline_ = now + settings_.freeze_wait;
  if (hooks_.peers == nullptr) return;  // alone: nobody else's end can reach its ranks
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    if (aborts(i)) hooks_.freeze(looks_[i].pid);
  }
  hooks_.peers->frozen();
}

void HangInquiry::abort_python_ranks(Clock::time_point now) {
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    RankLook& look = looks_[i];
    if (!place_from_py_spy(look.python_stacks).empty()) {
      look.python_from = "py-spy";
    } else if (aborts(i)) {
      if (!look.python_stacks.empty())
        look.native_stacks += "\n(py-spy: " + look.python_stacks + ")";
      look.python_stacks.clear();
      hooks_.abort_for_stacks(targets_[i].worker, look.pid);
      aborted_.push_back(i);
    }
    look.place = place_of(look);
  }
  phase_deadline_ = now + settings_.faulthandler_wait;
}

void HangInquiry::finish(Clock::time_point now) {
  for (std::size_t i : aborted_) {
    looks_[i].python_stacks = hooks_.captured_stderr(targets_[i].worker);
    looks_[i].python_from = "faulthandler";
    looks_[i].place = place_of(looks_[i]);
  }
  report_.timeout_seconds = settings_.timeout_seconds;
  report_.ranks = looks_;
  for (const RankLook& look : looks_) report_.places.push_back(look.digest());
  report_.decide();
  if (hooks_.peers == nullptr) {
    phase_ = Phase::done;
    return;
  }
  // Every node's ranks, the same verdict on every node.
  hooks_.peers->offer_places(report_.places);
  phase_deadline_ = now + settings_.peers_wait;
  phase_ = Phase::pooling;
}

std::optional<HangInquiry::Clock::time_point> HangInquiry::deadline() const {
  switch (phase_) {
    case Phase::flight_recorder:
    case Phase::peers_looked:
    case Phase::pooling:
      return std::min(phase_deadline_, Clock::now() + kPoll);
    case Phase::done:
      return std::nullopt;
    default:
      return phase_deadline_;
  }
}

}  // namespace aml

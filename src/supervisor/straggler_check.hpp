// --straggler-check S (DESIGN §6): every S seconds of the job's clock, each node asks its ranks'
// flight recorders for a dump (flight/flight_dump.hpp), keeps each group's calls enqueued by
// that moment, and gives them to the deciding node (node 0; the store or etcd between nodes).
// It measures each rank's lateness (flight/rank_lateness.hpp), puts it in the `lateness` event
// (aml_launch_rank_lateness_seconds), and names a straggler (flight/straggler_watch.hpp): a
// line, the `straggler` event, and with --bench-stragglers its node benched at the next round.
// Beside the supervisor's loop: nothing here waits.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flight/flight_dump.hpp"
#include "flight/rank_lateness.hpp"
#include "flight/straggler_watch.hpp"

namespace aml {

class EventLog;
class PeerLink;

class StragglerCheck {
 public:
  using Clock = std::chrono::steady_clock;

  struct Settings {
    double every_seconds = 0;  // 0: off
    double share = 0.2;        // of the step, late by more than which a rank is last
    bool bench = false;        // --bench-stragglers
    std::string pipe_prefix;   // the flight recorder's pipes and dumps (hang_files.hpp)
    std::string dump_prefix;
    int node_rank = 0;
  };
  struct Rank {
    int rank = -1;
  };

  StragglerCheck(Settings settings, PeerLink* peers, EventLog* events,
                 std::function<void(const std::string&)> say);

  bool on() const { return settings_.every_seconds > 0; }
  // After every pass of the loop; `ranks` gives this node's live ranks, asked only at a sample.
  void advance(Clock::time_point now, const std::function<std::vector<Rank>()>& ranks);
  std::optional<Clock::time_point> deadline(Clock::time_point now) const;
  // The round is over: where no rank ever answered, it is said now.
  void round_over();

 private:
  enum class Phase { idle, reading, pooling };
  std::int64_t job_clock_ns() const;
  std::int64_t every_ns() const { return static_cast<std::int64_t>(settings_.every_seconds * 1e9); }
  void ask(const std::vector<Rank>& ranks, Clock::time_point now);
  bool read(Clock::time_point now);
  std::vector<RankCalls> this_nodes_calls() const;
  void count_sample(bool any_dump, Clock::time_point now);
  void say_idle();
  void decide(const std::vector<RankCalls>& calls);

  Settings settings_;
  PeerLink* peers_;
  EventLog* events_;
  std::function<void(const std::string&)> say_;
  StragglerWatch watch_;
  Phase phase_ = Phase::idle;
  std::int64_t sample_ = -1;     // the sample being taken: its moment over S on the job's clock
  std::int64_t cut_off_ns_ = 0;  // its moment, this node's clock
  std::int64_t last_cut_off_ns_ = INT64_MIN;  // the sample's before
  std::int64_t offset_ns_ = 0;                // the job's clock less this node's
  Clock::time_point phase_deadline_;
  Clock::time_point next_look_;
  struct Asked {
    int rank;
    FlightDump dump;
    bool unanswered = false;
    std::optional<std::vector<GroupDigest>> groups;  // once read
  };
  std::vector<Asked> asked_;
  // Samples taken while no rank of this node ever gave a dump: said once (while the job runs
  // after a while: a rank makes its pipe only with its first NCCL group; else at the end).
  int samples_without_dumps_ = 0;
  bool any_dump_ = false;
  bool said_idle_ = false;
  Clock::time_point first_sample_at_;
};

}  // namespace aml

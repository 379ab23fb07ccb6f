// Where the job's wall time went on this node (DESIGN §6b), from its events: the workers
// running (the time that trained), the rendezvous before the first round, the recovery from a
// failure to the next round's workers running, the wait as a spare, the stop. "Goodput" is the
// share that trained. Per round and in all, for the summary and the metrics.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "events/event_observer.hpp"

namespace aml {

class GoodputClock : public EventObserver {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Phase { rendezvous, running, recovery, spare, stopping, count };
  static constexpr std::size_t kPhases = static_cast<std::size_t>(Phase::count);
  using Seconds = std::array<double, kPhases>;

  static const char* name(Phase phase);

  explicit GoodputClock(Clock::time_point start = Clock::now());

  void on_event(const Event& event) override;

  // Seconds in each phase up to `now` (the phase under way counted to then), and per round.
  Seconds totals(Clock::time_point now = Clock::now()) const;
  std::map<int, Seconds> rounds(Clock::time_point now = Clock::now()) const;
  // What the phase under way is: "rendezvous", "running", ... ("ended" once the job ended).
  std::string state() const;
  // Each stretch of one phase, in order (the one under way to `now`): the report's bars.
  struct Interval {
    Phase phase;
    Clock::time_point from, to;
    int round;
  };
  std::vector<Interval> intervals(Clock::time_point now = Clock::now()) const;
  // Each recovery's length, as it ended (for the metrics' histogram).
  const std::vector<double>& recoveries() const { return recoveries_; }

  // The summary's "time": {"wall_seconds", "trained_share", each phase's "<phase>_seconds",
  // "rounds": [{"round", each phase's seconds}]}.
  nlohmann::ordered_json json(Clock::time_point now = Clock::now()) const;
  // "aml-launch: time: 61.2 s, 55.0 s of it training (90 %): rendezvous 2.1 s, ..."
  std::string text(Clock::time_point now = Clock::now()) const;

 private:
  // A failure or a hang ends the workers' time: what follows is recovery if another round's
  // workers start, else the stop.
  enum class Mark { phase, after_failure, ended };
  void move_to(Phase next, Mark mark, const Event& event);
  Phase open_phase() const;  // the phase the open interval counts as, were it closed now

  Clock::time_point since_;
  Phase phase_ = Phase::rendezvous;
  Mark mark_ = Mark::phase;
  int round_ = 0;
  Seconds totals_{};
  std::map<int, Seconds> rounds_;
  std::vector<double> recoveries_;
  std::vector<Interval> intervals_;
};

}  // namespace aml

#include "events/goodput_clock.hpp"

#include <cstdio>

namespace aml {
namespace {

double seconds_between(GoodputClock::Clock::time_point a, GoodputClock::Clock::time_point b) {
  return b > a ? std::chrono::duration<double>(b - a).count() : 0.0;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, seconds < 10 ? "%.2f s" : "%.1f s", seconds);
  return text;
}

double rounded(double seconds) { return static_cast<long long>(seconds * 1000 + 0.5) / 1000.0; }

}  // namespace

const char* GoodputClock::name(Phase phase) {
  switch (phase) {
    case Phase::rendezvous:
      return "rendezvous";
    case Phase::running:
      return "running";
    case Phase::recovery:
      return "recovery";
    case Phase::spare:
      return "spare";
    case Phase::stopping:
      return "stopping";
    case Phase::count:
      break;
  }
  return "?";
}

GoodputClock::GoodputClock(Clock::time_point start) : since_(start) {}

GoodputClock::Phase GoodputClock::open_phase() const {
  // After a failure the time is recovery's once a round starts again; until then, and at
  // the end, the stop's.
  return mark_ == Mark::after_failure ? Phase::stopping : phase_;
}

void GoodputClock::move_to(Phase next, Mark mark, const Event& event) {
  if (mark_ == Mark::ended) return;
  Phase closed = open_phase();
  if (mark_ == Mark::after_failure && next == Phase::running && mark == Mark::phase) {
    closed = Phase::recovery;
    recoveries_.push_back(seconds_between(since_, event.at));
  }
  const double spent = seconds_between(since_, event.at);
  totals_[static_cast<std::size_t>(closed)] += spent;
  rounds_[event.round][static_cast<std::size_t>(closed)] += spent;
  if (spent > 0) intervals_.push_back({closed, since_, event.at, event.round});
  since_ = event.at;
  phase_ = next;
  mark_ = mark;
  round_ = event.round;
}

namespace {

// A worker's exit that fails it (a signal, a status other than 0): its launcher may tell the
// others before it writes "failure" (seconds, where the rendezvous is out of reach), and the
// workers stopped training at the exit.
bool failed_exit(const Event& event) {
  if (event.kind != "worker_exited") return false;
  const auto code = event.details.find("exit_code");
  const auto signal = event.details.find("signal");
  return (signal != event.details.end() && !signal->is_null()) ||
         (code != event.details.end() && code->is_number() && code->get<int>() != 0);
}

}  // namespace

void GoodputClock::on_event(const Event& event) {
  const std::string_view kind = event.kind;
  if (kind == "round_started") {
    move_to(Phase::running, Mark::phase, event);
  } else if (kind == "failure" || kind == "failure_elsewhere" || kind == "node_lost" ||
             kind == "hang" || failed_exit(event) ||
             (kind == "round_ended" && phase_ == Phase::running && mark_ == Mark::phase)) {
    // The first failure here, a hang, or a round ended by another node's failure (or by its
    // workers' success, which the job's end follows at once).
    if (mark_ == Mark::phase && phase_ == Phase::running)
      move_to(phase_, Mark::after_failure, event);
  } else if (kind == "stop" || kind == "launcher_killed") {
    if (mark_ != Mark::ended) move_to(Phase::stopping, Mark::phase, event);
  } else if (kind == "spare_waiting" || kind == "benched_waiting") {
    // A benched node sits out as a spare of last resort: its wait is not its workers' stop.
    move_to(Phase::spare, Mark::phase, event);
  } else if (kind == "rendezvous_formed" && phase_ == Phase::spare) {
    move_to(Phase::rendezvous, Mark::phase, event);
  } else if (kind == "end") {
    move_to(phase_, Mark::ended, event);
  }
}

GoodputClock::Seconds GoodputClock::totals(Clock::time_point now) const {
  Seconds out = totals_;
  if (mark_ != Mark::ended)
    out[static_cast<std::size_t>(open_phase())] += seconds_between(since_, now);
  return out;
}

std::map<int, GoodputClock::Seconds> GoodputClock::rounds(Clock::time_point now) const {
  std::map<int, Seconds> out = rounds_;
  if (mark_ != Mark::ended)
    out[round_][static_cast<std::size_t>(open_phase())] += seconds_between(since_, now);
  return out;
}

std::vector<GoodputClock::Interval> GoodputClock::intervals(Clock::time_point now) const {
  std::vector<Interval> out = intervals_;
  if (mark_ != Mark::ended && now > since_) out.push_back({open_phase(), since_, now, round_});
  return out;
}

std::string GoodputClock::state() const {
  if (mark_ == Mark::ended) return "ended";
  if (mark_ == Mark::after_failure) return "recovering";
  return name(phase_);
}

namespace {

double sum(const GoodputClock::Seconds& seconds) {
  double total = 0;
  for (double s : seconds) total += s;
  return total;
}

void put_phases(nlohmann::ordered_json& out, const GoodputClock::Seconds& seconds) {
  for (std::size_t i = 0; i < GoodputClock::kPhases; ++i) {
    out[std::string(GoodputClock::name(static_cast<GoodputClock::Phase>(i))) + "_seconds"] =
        rounded(seconds[i]);
  }
}

}  // namespace

nlohmann::ordered_json GoodputClock::json(Clock::time_point now) const {
  const Seconds all = totals(now);
  const double wall = sum(all);
  nlohmann::ordered_json out;
  out["wall_seconds"] = rounded(wall);
  out["trained_share"] =
      wall > 0 ? rounded(all[static_cast<std::size_t>(Phase::running)] / wall) : 0.0;
  put_phases(out, all);
  auto& per_round = out["rounds"] = nlohmann::ordered_json::array();
  for (const auto& [round, seconds] : rounds(now)) {
    nlohmann::ordered_json one;
    one["round"] = round;
    put_phases(one, seconds);
    per_round.push_back(std::move(one));
  }
  return out;
}

std::string GoodputClock::text(Clock::time_point now) const {
  const Seconds all = totals(now);
  const double wall = sum(all);
  const double running = all[static_cast<std::size_t>(Phase::running)];
  char share[16];
  std::snprintf(share, sizeof share, "%.0f %%", wall > 0 ? 100 * running / wall : 0.0);
  std::string text = "aml-launch: time: " + seconds_text(wall) + ", " + seconds_text(running) +
                     " of it the workers running (" + share + ")";
  std::string rest;
  for (Phase phase : {Phase::rendezvous, Phase::recovery, Phase::spare, Phase::stopping}) {
    const double spent = all[static_cast<std::size_t>(phase)];
    if (spent < 0.005) continue;  // what would read "0.00 s"
    rest += (rest.empty() ? "" : ", ") + std::string(name(phase)) + " " + seconds_text(spent);
  }
  return text + (rest.empty() ? "" : "; " + rest) + "\n";
}

}  // namespace aml

#include "supervisor/straggler_check.hpp"

#include <cmath>
#include <cstdio>

#include "events/event_log.hpp"
#include "supervisor/failure_summary.hpp"
#include "supervisor/peer_link.hpp"
#include "util/wall_clock.hpp"

namespace aml {
namespace {

constexpr std::chrono::milliseconds kSamplePoll{100};
// A group's newest calls compared: a step's worth in most jobs, a few hundred bytes a rank.
constexpr std::size_t kCallsKept = 64;
constexpr int kSaidAfter = 3;
constexpr std::chrono::minutes kIdleSaidAfter{10};

std::string decimals(double value, const char* format) {
  char text[32];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace

StragglerCheck::StragglerCheck(Settings settings, PeerLink* peers, EventLog* events,
                               std::function<void(const std::string&)> say)
    : settings_(std::move(settings)),
      peers_(peers),
      events_(events),
      say_(std::move(say)),
      watch_(settings_.share) {}

std::int64_t StragglerCheck::job_clock_ns() const { return wall_clock_ns() + offset_ns_; }

std::optional<StragglerCheck::Clock::time_point> StragglerCheck::deadline(
    Clock::time_point now) const {
  if (!on()) return std::nullopt;
  if (phase_ != Phase::idle) return std::max(now, next_look_);
  // The next sample's moment on the job's clock, as this node's steady clock sees it.
  const std::int64_t every = every_ns();
  const std::int64_t job_now = job_clock_ns();
  const std::int64_t next = (job_now / every + 1) * every;
  return now + std::chrono::nanoseconds(next - job_now);
}

void StragglerCheck::advance(Clock::time_point now,
                             const std::function<std::vector<Rank>()>& ranks) {
  if (!on()) return;
  if (phase_ != Phase::idle && now < next_look_) return;
  next_look_ = now + kSamplePoll;
  const std::int64_t every = every_ns();
  switch (phase_) {
    case Phase::idle: {
      const std::int64_t job_now = job_clock_ns();
      if (sample_ < 0) sample_ = job_now / every;  // the first at the next moment
      if (job_now / every <= sample_) return;
      // The offset again at each sample (over the store: a round trip): clocks drift.
      if (peers_ != nullptr) {
        if (auto offset = peers_->clock_offset_ns()) offset_ns_ = *offset;
      }
      const std::int64_t sample = job_clock_ns() / every;
      last_cut_off_ns_ = sample == sample_ + 1 ? cut_off_ns_ : INT64_MIN;
      sample_ = sample;
      cut_off_ns_ = sample_ * every - offset_ns_;
      ask(ranks(), now);
      return;
    }
    case Phase::reading: {
      if (!read(now)) return;
      const std::vector<RankCalls> mine = this_nodes_calls();
      if (!asked_.empty()) count_sample(!mine.empty(), now);
      if (peers_ == nullptr) {
        phase_ = Phase::idle;
        return decide(mine);
      }
      peers_->offer_calls(sample_, rank_calls_json(mine, offset_ns_).dump());
      phase_ = Phase::pooling;
      // The deciding node waits for the others up to the next sample's moment.
      phase_deadline_ = now + std::chrono::nanoseconds((sample_ + 1) * every - job_clock_ns());
      return;
    }
    case Phase::pooling: {
      if (peers_->member() != 0) {
        phase_ = Phase::idle;
        return;
      }
      auto all = peers_->pooled_calls(sample_, now >= phase_deadline_);
      if (!all) return;
      std::vector<RankCalls> calls;
      for (const std::string& text : *all) {
        for (RankCalls& r : rank_calls_from_json(nlohmann::json::parse(text, nullptr, false)))
          calls.push_back(std::move(r));
      }
      phase_ = Phase::idle;
      return decide(calls);
    }
  }
}

void StragglerCheck::ask(const std::vector<Rank>& ranks, Clock::time_point now) {
  asked_.clear();
  for (const Rank& r : ranks) {
    const std::string rank = std::to_string(r.rank);
    asked_.push_back(
        {r.rank, FlightDump(settings_.pipe_prefix + rank + ".pipe", settings_.dump_prefix + rank),
         false, std::nullopt});
    Asked& a = asked_.back();
    a.unanswered = a.dump.ask() == FlightDump::Asked::unanswered;
  }
  // Half the period for the dumps (the first one symbolizes the recorded stacks: a second or
  // more), at most 15 s.
  phase_deadline_ = now + std::chrono::milliseconds(static_cast<long long>(
                              std::min(15.0, settings_.every_seconds / 2) * 1000));
  phase_ = Phase::reading;
}

// True once every asked rank's dump is read, or the wait is over.
bool StragglerCheck::read(Clock::time_point now) {
  bool all = true;
  for (Asked& a : asked_) {
    if (a.unanswered) a.unanswered = a.dump.ask() == FlightDump::Asked::unanswered;
    if (!a.dump.asked() || a.groups) continue;
    if (auto value = a.dump.read_if_grown(); value && *value) {
      auto groups = digest_flight_dump(**value, 16, {kCallsKept, cut_off_ns_, last_cut_off_ns_});
      if (groups) a.groups = std::move(*groups);
    }
    all = all && a.groups.has_value();
  }
  for (const Asked& a : asked_) all = all && !a.unanswered;
  return all || now >= phase_deadline_;
}

// A job whose ranks never answer (no torch, a torch without a recorder, no NCCL process group)
// is told so once, not left to wonder why nobody is ever measured. While the job runs only after
// a while: a rank makes its pipe with its first NCCL group, after its imports and its meeting.
void StragglerCheck::count_sample(bool any_dump, Clock::time_point now) {
  any_dump_ = any_dump_ || any_dump;
  if (any_dump_ || said_idle_) return;
  if (samples_without_dumps_++ == 0) first_sample_at_ = now;
  if (samples_without_dumps_ >= kSaidAfter && now - first_sample_at_ >= kIdleSaidAfter) say_idle();
}

void StragglerCheck::round_over() {
  if (on() && !any_dump_ && !said_idle_ && samples_without_dumps_ > 0) say_idle();
}

void StragglerCheck::say_idle() {
  said_idle_ = true;
  say_("aml-launch: --straggler-check: no rank on this node gave a flight recorder dump in " +
       std::to_string(samples_without_dumps_) + " samples (nothing listened on " +
       settings_.pipe_prefix +
       "<rank>.pipe: not torch, a torch without a recorder, or no NCCL process group): its ranks "
       "were not measured\n");
  if (events_ != nullptr)
    events_->write("straggler_check_idle",
                   {{"node_rank", settings_.node_rank}, {"samples", samples_without_dumps_}});
}

std::vector<RankCalls> StragglerCheck::this_nodes_calls() const {
  std::vector<RankCalls> out;
  for (const Asked& a : asked_) {
    if (a.groups) out.push_back({a.rank, settings_.node_rank, *a.groups});
  }
  return out;
}

void StragglerCheck::decide(const std::vector<RankCalls>& calls) {
  const LatenessSample sample = measure_lateness(calls);
  if (sample.ranks.empty()) return;
  if (events_ != nullptr) {
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (const auto& r : sample.ranks) ranks.push_back({r.rank, r.node, r.seconds});
    // The sample's moment on the job's clock.
    const auto at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(sample_ * every_ns())));
    events_->write("lateness", {{"at", utc_timestamp(at)},
                                {"step_seconds", sample.step_seconds},
                                {"compared", sample.compared},
                                {"ranks", std::move(ranks)}});
  }
  auto named = watch_.add(sample);
  if (!named) return;
  const auto& r = named->rank;
  const bool benched =
      settings_.bench && peers_ != nullptr &&
      peers_->bench_straggler(r.node, "rank " + std::to_string(r.rank) + " late by " +
                                          decimals(r.seconds, "%.3f s") + " a collective");
  std::string line = "aml-launch: rank " + std::to_string(r.rank) + " (node " +
                     std::to_string(r.node) + ") is a straggler: it enqueued its collectives " +
                     decimals(r.seconds, "%.3f s") + " after the earliest rank on average, " +
                     decimals(std::round(named->share * 100), "%.0f") + " % of the " +
                     decimals(named->step_seconds, "%.3f s") + " step, last in " +
                     std::to_string(named->times) + " of the last " + std::to_string(named->of) +
                     " samples (--straggler-check)";
  if (settings_.bench) {
    line += benched ? "; its node is benched at the next round where a spare or MIN allows"
                    : "; not benched: only an elastic job (--nnodes MIN:MAX) benches a node";
  }
  say_(line + "\n");
  if (events_ != nullptr) {
    events_->write("straggler",
                   {{"node_rank", r.node},
                    {"lateness_seconds", r.seconds},
                    {"step_seconds", named->step_seconds},
                    {"share", named->share},
                    {"samples", named->times},
                    {"of", named->of},
                    {"benched", benched}},
                   r.rank);
  }
}

}  // namespace aml

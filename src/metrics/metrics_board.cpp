#include "metrics/metrics_board.hpp"

#include <array>

#include "metrics/prometheus_text.hpp"
#include "supervisor/proc_state.hpp"

namespace aml {
namespace {

// Durations' buckets, seconds: a rendezvous of a few nodes to a recovery of a large job.
constexpr std::array<double, 11> kDurationBounds = {0.1, 0.25, 0.5, 1,   2.5, 5,
                                                    10,  30,   60,  120, 300};

struct ProcUsage {
  bool found = false;
  double cpu_seconds = 0;  // user + system, its reaped children's included
  double resident_bytes = 0;
};

ProcUsage proc_usage(const std::string& pid) {
  const ProcState p = read_proc_stat(pid);
  return {p.found, ticks_to_seconds(p.cpu_ticks + p.reaped_children_cpu_ticks), resident_bytes(p)};
}

std::string status_of(const nlohmann::ordered_json& exit) {
  if (auto name = exit.find("signal_name"); name != exit.end() && name->is_string()) {
    return name->get<std::string>();
  }
  if (auto code = exit.find("exit_code"); code != exit.end() && code->is_number()) {
    return std::to_string(code->get<int>());
  }
  return "unknown";
}

int int_of(const nlohmann::ordered_json& details, const char* key, int otherwise) {
  auto value = details.find(key);
  return value != details.end() && value->is_number() ? value->get<int>() : otherwise;
}

}  // namespace

MetricsBoard::MetricsBoard(MetricsIdentity identity)
    : identity_(std::move(identity)), max_restarts_(identity_.max_restarts) {}

void MetricsBoard::on_event(const Event& event) {
  std::lock_guard lock(mutex_);
  clock_.on_event(event);
  round_ = event.round;
  node_rank_ = event.node_rank;
  const std::string_view kind = event.kind;
  const auto& details = event.details;
  if (kind == "worker_started") {
    running_[int_of(details, "pid", 0)] = {event.rank, int_of(details, "local_rank", 0)};
  } else if (kind == "worker_exited") {
    running_.erase(int_of(details, "pid", 0));
    exits_[status_of(details)] += 1;
  } else if (kind == "round_started") {
    restarts_used_ = int_of(details, "restarts_used", restarts_used_);
    max_restarts_ = int_of(details, "max_restarts", max_restarts_);
  } else if (kind == "rendezvous_formed") {
    nodes_ = int_of(details, "nodes", nodes_);
    benched_ = int_of(details, "benched", benched_);
    spares_ = int_of(details, "spares", spares_);
    if (auto waited = details.find("waited_seconds"); waited != details.end()) {
      rendezvous_waits_.push_back(waited->get<double>());
    }
  } else if (kind == "failure") {
    failures_ += 1;
  } else if (kind == "node_lost") {
    nodes_lost_ += 1;
  } else if (kind == "node_returned") {
    nodes_returned_ += 1;
  } else if (kind == "stop") {
    stops_ += 1;
  } else if (kind == "notice") {
    notices_ += 1;
  } else if (kind == "hang_inquiry") {
    hang_inquiries_ += 1;
  } else if (kind == "hang") {
    hang_verdicts_ += 1;
  } else if (kind == "lateness") {
    // The deciding node's last sample: every rank measured, whichever node it is on.
    lateness_.clear();
    for (const auto& r : details.value("ranks", nlohmann::ordered_json::array())) {
      if (r.is_array() && r.size() == 3 && r[2].is_number())
        lateness_[{r[0].get<int>(), r[1].get<int>()}] = r[2].get<double>();
    }
  } else if (kind == "launch") {
    nodes_ = int_of(details, "nnodes", nodes_);
  }
}

std::string MetricsBoard::render() {
  // /proc read with the lock let go: the supervisor's next event never waits for it.
  std::map<pid_t, Worker> running;
  {
    std::lock_guard lock(mutex_);
    running = running_;
  }
  std::vector<std::pair<Worker, ProcUsage>> usage;
  for (const auto& [pid, worker] : running) {
    ProcUsage used = proc_usage(std::to_string(pid));
    if (used.found) usage.emplace_back(worker, used);
  }
  const ProcUsage self = proc_usage("self");
  std::lock_guard lock(mutex_);
  const auto now = GoodputClock::Clock::now();
  PrometheusText out;
  out.family("aml_launch_info", "gauge",
             "The launcher: its version, host and the job's run id (always 1).");
  out.sample(
      "aml_launch_info", 1,
      {{"version", identity_.version}, {"host", identity_.host}, {"run_id", identity_.run_id}});
  out.single("aml_launch_node_rank", "gauge", "This launcher's node rank in the round.",
             node_rank_);
  out.family("aml_launch_state", "gauge",
             "What the job is doing on this node: 1 for the state it is in, 0 for the others.");
  const std::string state = clock_.state();
  for (const char* one : {"rendezvous", "running", "recovering", "spare", "stopping", "ended"}) {
    out.sample("aml_launch_state", state == one ? 1 : 0, {{"state", one}});
  }
  // The job's own figures, the same on every node: labelled with the job, so that
  // max by (run_id) counts each restart once (a sum over the nodes counts it on each).
  out.family("aml_launch_round", "gauge",
             "The job's round under way: 0, then one more at each restart.");
  out.sample("aml_launch_round", round_, {{"run_id", identity_.run_id}});
  out.family("aml_launch_restarts_total", "counter",
             "The job's rounds that ended in a failure and were restarted (--max-restarts counts "
             "them); every node says the same: max by (run_id).");
  out.sample("aml_launch_restarts_total", restarts_used_, {{"run_id", identity_.run_id}});
  out.family("aml_launch_restarts_left", "gauge",
             "Restarts the job's --max-restarts still allows.");
  out.sample("aml_launch_restarts_left", std::max(0, max_restarts_ - restarts_used_),
             {{"run_id", identity_.run_id}});
  out.single("aml_launch_workers_running", "gauge", "This node's workers running now.",
             static_cast<double>(running_.size()));
  out.family("aml_launch_worker_exits_total", "counter",
             "This node's workers that ended, by status: the exit code, or the signal's name.");
  for (const auto& [status, count] : exits_) {
    out.sample("aml_launch_worker_exits_total", count, {{"status", status}});
  }
  out.single("aml_launch_failures_total", "counter",
             "Rounds whose first failure on this node was a worker of this node.", failures_);
  out.family("aml_launch_nodes", "gauge",
             "Nodes of the job, by role: in the round, waiting as spares (as the node that "
             "gave the round's seats counted them), benched for good.");
  out.sample("aml_launch_nodes", nodes_, {{"role", "in_round"}});
  out.sample("aml_launch_nodes", spares_, {{"role", "spare"}});
  out.sample("aml_launch_nodes", benched_, {{"role", "benched"}});
  out.histogram("aml_launch_rendezvous_duration_seconds",
                "How long this node waited for the others at each rendezvous.", kDurationBounds,
                rendezvous_waits_);
  out.histogram("aml_launch_recovery_duration_seconds",
                "From a failure to the next round's workers running, each recovery.",
                kDurationBounds, clock_.recoveries());
  out.single("aml_launch_nodes_lost_total", "counter",
             "Nodes whose launcher was lost (dead or silent) while this node's workers ran.",
             nodes_lost_);
  out.single("aml_launch_nodes_returned_total", "counter",
             "On node 0: machines seated again after they held a seat before (a launcher "
             "started again there, a spare or benched node seated again).",
             nodes_returned_);
  out.single("aml_launch_stops_total", "counter", "Stop signals from outside (TERM, INT, HUP).",
             stops_);
  out.single("aml_launch_notices_total", "counter",
             "Notices of the job's end or a pause heard (preemption, maintenance).", notices_);
  out.single("aml_launch_hang_inquiries_total", "counter",
             "Times no rank showed progress for --hang-timeout and every rank was looked at.",
             hang_inquiries_);
  out.single("aml_launch_hang_verdicts_total", "counter",
             "Hang verdicts: the job was stopped for a hang.", hang_verdicts_);
  out.family("aml_launch_rank_lateness_seconds", "gauge",
             "--straggler-check's last sample: each rank's mean lateness at the collectives (when "
             "it enqueued each, after the earliest rank of the group); on the deciding node.");
  for (const auto& [who, seconds] : lateness_) {
    out.sample("aml_launch_rank_lateness_seconds", seconds,
               {{"rank", std::to_string(who.first)}, {"node", std::to_string(who.second)}});
  }
  // The workers' and the launcher's own use, read now.
  out.family("aml_launch_worker_cpu_seconds_total", "counter",
             "Each running worker's CPU time (user and system, its reaped children's with it).");
  for (const auto& [worker, used] : usage) {
    const std::string rank = std::to_string(worker.rank);
    const std::string local_rank = std::to_string(worker.local_rank);
    out.sample("aml_launch_worker_cpu_seconds_total", used.cpu_seconds,
               {{"rank", rank}, {"local_rank", local_rank}});
  }
  out.family("aml_launch_worker_resident_memory_bytes", "gauge",
             "Each running worker's resident memory.");
  for (const auto& [worker, used] : usage) {
    const std::string rank = std::to_string(worker.rank);
    const std::string local_rank = std::to_string(worker.local_rank);
    out.sample("aml_launch_worker_resident_memory_bytes", used.resident_bytes,
               {{"rank", rank}, {"local_rank", local_rank}});
  }
  out.single("aml_launch_launcher_cpu_seconds_total", "counter",
             "This launcher's own CPU time (its supervisor process).", self.cpu_seconds);
  out.single("aml_launch_launcher_resident_memory_bytes", "gauge",
             "This launcher's own resident memory.", self.resident_bytes);
  // Goodput (goodput_clock.hpp).
  const GoodputClock::Seconds spent = clock_.totals(now);
  out.family("aml_launch_phase_seconds_total", "counter",
             "This node's wall time by phase: running (the workers trained), rendezvous, "
             "recovery, spare, stopping.");
  double wall = 0;
  for (std::size_t i = 0; i < GoodputClock::kPhases; ++i) {
    wall += spent[i];
    out.sample("aml_launch_phase_seconds_total", spent[i],
               {{"phase", GoodputClock::name(static_cast<GoodputClock::Phase>(i))}});
  }
  out.family("aml_launch_goodput_ratio", "gauge",
             "The share of this node's wall time its workers ran: goodput.");
  out.sample("aml_launch_goodput_ratio",
             wall > 0 ? spent[static_cast<std::size_t>(GoodputClock::Phase::running)] / wall : 0);
  return out.text();
}

}  // namespace aml

// A round's one verdict (DESIGN §5): node 0 collects every node's entry, checks that they agree
// on the job and are healthy, picks the workers' ports and writes the verdict (lead_round); the
// others read it (follow_round). Both say what they wait for while the round is not forming.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "rendezvous/group_timing.hpp"
#include "rendezvous/node_group.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {

using std::chrono::milliseconds;
using namespace group_timing;

// The nodes of a fixed-size round whose health checks failed: benched, as an elastic job's
// would be, so that every node's --bad-nodes-file and summary name them.
std::vector<BenchedNode> NodeGroup::sick_nodes(const std::vector<NodeInfo>& nodes) const {
  std::vector<BenchedNode> sick;
  const std::string now = utc_timestamp(std::chrono::system_clock::now());
  for (const NodeInfo& node : nodes) {
    if (node.health.empty()) continue;
    sick.push_back({-1, node.host, node.addr, node.machine, node.node_rank,
                    "failed its health check", node.health, now, round_, node.pid});
  }
  return sick;
}

void NodeGroup::record_bench(const std::vector<BenchedNode>& bench) const {
  if (!options_.benched) return;
  for (const BenchedNode& node : bench) options_.benched(node);
}

Result<Agreement> NodeGroup::lead_round() {
  const int nnodes = options_.self.nnodes;
  // An elastic round's members were given their seats a moment ago: one that does not come
  // within --node-timeout is lost, not late.
  const auto deadline =
      Clock::now() + (options_.elastic ? options_.node_timeout : options_.rdzv_timeout);
  Agreement agreement;
  agreement.round = round_;
  // Every node's info, in order: one call waits for a thousand nodes at once, all of them
  // until the common deadline.
  std::vector<int> present;
  int node = 0;
  arrivals_said_ = Clock::now();
  for (const auto& keys : key_batches("node")) {
    // In slices that end when a line of the wait is due, or node 0's word for the others' lines:
    // which nodes came, which did not.
    auto infos = control_->get_all(keys, lead_slice(deadline));
    while (infos && left_until(deadline).count() > 0 &&
           std::find(infos->begin(), infos->end(), std::nullopt) != infos->end()) {
      const auto now = Clock::now();
      if (progress_.due(now) || now >= arrivals_said_ + kArrivalsEvery) {
        say_progress(
            "waiting for the nodes to join " + rendezvous_text(options_) + ": " +
                publish_arrivals(),
            deadline,
            options_.elastic ? "--node-timeout " + seconds_text(options_.node_timeout) : "");
      }
      infos = control_->get_all(keys, lead_slice(deadline));
    }
    if (!infos) return infos.error();
    for (const auto& info : *infos) {
      const int this_node = node++;
      if (!info) continue;
      auto parsed = node_info_from_json(*info);
      if (!parsed) return invalid("rendezvous", *info, "a node description from aml-launch");
      agreement.nodes.push_back(*parsed);
      present.push_back(this_node);
    }
  }
  std::string error;
  if (static_cast<int>(present.size()) < nnodes && options_.elastic) {
    return formed_again_without(present);
  } else if (static_cast<int>(present.size()) < nnodes) {
    error = "every node to join within --rdzv-timeout " + seconds_text(options_.rdzv_timeout) +
            "; " + members_word() + "(s) " + missing_node_ranks(nnodes, present) + " of " +
            std::to_string(nnodes) + " did not";
  } else if (auto problem = disagreement(agreement.nodes)) {
    error = "nodes that agree on the job; " + *problem;
  } else if (auto sick = std::find_if(agreement.nodes.begin(), agreement.nodes.end(),
                                      [](const NodeInfo& n) { return !n.health.empty(); });
             sick != agreement.nodes.end()) {
    // A fixed-size job cannot go on without it: every node stops before any worker starts,
    // and each writes the sick nodes down for the scheduler's retry.
    error = "healthy nodes; " + sick->describe() + " at " + sick->addr +
            " failed its health check: " + sick->health +
            " (it holds no rank: the job has no spare; --health-checks)";
    agreement.bench = sick_nodes(agreement.nodes);
  } else if (auto opened = open_workers_ports(agreement); !opened) {
    return opened.error();
  }
  agreement.node_count = static_cast<int>(agreement.nodes.size());
  if (options_.elastic) agreement.bench = round_bench(round_);
  agreement.slower_ports = slower_ports(agreement.nodes);
  if (auto set = control_->set(key("verdict"), verdict_of(agreement, error)); !set) {
    return set.error();
  }
  if (error.empty()) return agreement;
  if (!options_.elastic) record_bench(agreement.bench);
  // Node 0's store goes away with this launcher: first let the nodes that came read why
  // (etcd keeps the verdict: nobody is waited for there).
  if (on_etcd()) return invalid("rendezvous", round_name(), error);
  std::vector<std::string> readers;
  for (int node : present) {
    if (node != 0) readers.push_back(node_key("verdict-read", node));
  }
  if (!readers.empty()) (void)control_->wait(readers, kGoodbyeWait);
  return invalid("rendezvous", round_name(), error);
}

// An elastic round's member seated a moment ago that does not come within --node-timeout is
// lost (it died, or was paused or cut off as it was seated): the round is formed again without
// it, no restart used, as a round started at once that never sees a member is
// (node_group_round_at_once.cpp). Its abort names the first one (whoever gives the next seats
// benches it); its verdict tells the members that came to go on to the next round.
Result<Agreement> NodeGroup::formed_again_without(const std::vector<int>& present) {
  const int nnodes = options_.self.nnodes;
  int missing = 0;
  while (std::find(present.begin(), present.end(), missing) != present.end()) ++missing;
  const std::string why =
      "seated in round " + std::to_string(round_) + ", it did not come within --node-timeout " +
      seconds_text(options_.node_timeout) + " (it died, or was paused or cut off as it was seated)";
  // last_round(round_ + 1): this round's seats' record.
  JobFailure never_came = seated_lost(last_round(round_ + 1), missing, why);
  never_came.regroup = true;
  (void)stored_failure_or(never_came);
  const std::string error = "every node seated in it to join within --node-timeout " +
                            seconds_text(options_.node_timeout) + "; " + members_word() + "(s) " +
                            missing_node_ranks(nnodes, present) + " of " + std::to_string(nnodes) +
                            " did not: the round is formed again without them";
  Agreement agreement;
  agreement.round = round_;
  auto verdict = nlohmann::ordered_json::parse(verdict_of(agreement, error));
  verdict["regroup"] = true;
  if (auto set = control_->set(key("verdict"), verdict.dump()); !set) return set.error();
  formed_again_ = true;
  return invalid("rendezvous", round_name(), error);
}

Result<Agreement> NodeGroup::follow_round(std::optional<std::string> seen, RendezvousClient& from) {
  // Node 0 decides within the same timeout; a little more lets its verdict arrive. In slices
  // that end when a line of the wait is due.
  const auto deadline = Clock::now() + options_.rdzv_timeout + options_.node_timeout;
  auto text = seen ? Result<std::optional<std::string>>(seen)
                   : from.get(key("verdict"), progress_.slice(left_until(deadline), Clock::now()));
  while (!seen && text && !*text && left_until(deadline).count() > 0) {
    if (progress_.due(Clock::now())) {
      say_progress("joined " + rendezvous_text(options_) +
                       ", waiting for the round: " + node0_arrivals(from),
                   deadline - options_.node_timeout);
    }
    text = from.get(key("verdict"), progress_.slice(left_until(deadline), Clock::now()));
  }
  if (!text) {
    Error error = text.error();
    error.expected += on_etcd() ? " (etcd could not be reached during the rendezvous)"
                                : " (node 0's launcher went away during the rendezvous)";
    return error;
  }
  if (!*text) {
    std::vector<int> present;
    for (int node = 0; node < options_.self.nnodes; ++node) {
      auto there = control_->check({node_key("node", node)});
      if (there && *there) present.push_back(node);
    }
    return invalid("rendezvous", round_name(),
                   "every node to join within --rdzv-timeout " +
                       seconds_text(options_.rdzv_timeout) + "; " + members_word() + "(s) " +
                       missing_node_ranks(options_.self.nnodes, present) + " of " +
                       std::to_string(options_.self.nnodes) + " did not");
  }
  // Node 0's store goes away with a failed rendezvous once its readers have it; etcd keeps it.
  if (!on_etcd()) (void)control_->set(node_key("verdict-read", options_.self.node_rank), "1");
  auto verdict = nlohmann::json::parse(**text, nullptr, false);
  if (verdict.is_discarded() || !verdict.is_object()) {
    return invalid("rendezvous", **text, "node 0's verdict as JSON");
  }
  std::string error = verdict.value("error", std::string("no verdict"));
  formed_again_ = !error.empty() && verdict.value("regroup", false);
  if (!error.empty()) {
    if (!options_.elastic && verdict.contains("bench"))
      record_bench(bench_from_json(verdict["bench"]));
    return invalid("rendezvous", round_name(), error);
  }
  Agreement agreement;
  agreement.round = round_;
  agreement.worker_master_port = verdict.value("worker_master_port", 0);
  agreement.worker_store_port = verdict.value("worker_store_port", 0);
  if (verdict.contains("relay") && verdict["relay"].is_string())
    agreement.relay = verdict["relay"].get<std::string>();
  agreement.jax_coordinator_port = verdict.value("jax_coordinator_port", 0);
  for (const auto& node : verdict.value("nodes", nlohmann::json::array())) {
    auto parsed = node_info_from_json(node.dump());
    if (!parsed) return invalid("rendezvous", node.dump(), "a node description from aml-launch");
    agreement.nodes.push_back(*parsed);
  }
  agreement.node_count = verdict.value("node_count", static_cast<int>(agreement.nodes.size()));
  if (verdict.contains("bench")) agreement.bench = bench_from_json(verdict["bench"]);
  return agreement;
}

}  // namespace aml

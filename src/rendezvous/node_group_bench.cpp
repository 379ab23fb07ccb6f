// The bench as the nodes of a round see it (DESIGN §5, bench.hpp): the round's node 0 reads it
// from the seats' record and tells its members in the verdict; a node that sits out says so
// once and waits, never taken, for the job's end (a launcher that exited early would be
// started again on the same machine by its scheduler); a node seated before its failing checks
// were read ends the round without using a restart.
#include <nlohmann/json.hpp>

#include "rendezvous/elastic_keys.hpp"
#include "rendezvous/node_group.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {

// Who the way the last round ended benches: the launcher it lost, a node whose checks failed
// once seated, a node whose rank failed first for the bench_after-th time.
void NodeGroup::bench_by_last_round(BenchBook& book, const LastRound& last, int round) const {
  const int bench_after = options_.bench_after;
  if (!last.failure || !last.failed) return;
  const JobFailure& failure = *last.failure;
  const long id = *last.failed;
  BenchedNode node;
  node.launcher = id;
  if (auto known = last.who.find(id); known != last.who.end()) {
    node.host = known->second.host;
    node.addr = known->second.addr;
    node.machine = known->second.machine;  // every way to the bench keeps the scheduler's name
    node.pid = known->second.pid;
  }
  node.node_rank = failure.member_or_node();
  node.time = failure.time.empty() ? utc_timestamp(std::chrono::system_clock::now()) : failure.time;
  if (failure.launcher_lost()) {
    node.reason = "its launcher was lost";
    node.figure = failure.status.substr(
        std::min(failure.status.size(), JobFailure::kLauncherLost.size() + 2));
  } else if (failure.health_failed()) {
    node.reason = "failed its health check";
    node.figure = failure.status.substr(
        std::min(failure.status.size(), JobFailure::kHealthFailed.size() + 2));
  } else if (failure.rank >= 0 && failure.stop_signal == 0 && !failure.regroup &&
             ++book.first_failures[id] >= bench_after) {
    node.reason = "its rank failed first in " + std::to_string(book.first_failures[id]) +
                  " rounds (--bench-after " + std::to_string(bench_after) + ")";
    node.figure = failure.describe();
  } else {
    return;
  }
  book.add(node, round);
}

std::vector<BenchedNode> NodeGroup::round_bench(int round) {
  auto record = control_->get(elastic_key(round, "seats"), std::chrono::milliseconds(0));
  if (!record || !*record) return {};
  auto parsed = nlohmann::json::parse(**record, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("bench")) return {};
  return bench_from_json(parsed["bench"]);
}

void NodeGroup::waits_benched(const std::string& why, const std::string& meanwhile) {
  if (said_benched_) return;
  said_benched_ = true;
  if (options_.waits) options_.waits("benched_waiting", why);
  if (options_.say)
    options_.say("aml-launch: " + options_.self.host + ": this node is benched (" + why +
                 "): it holds no rank in this job and " +
                 (meanwhile.empty() ? "waits, never seated," : meanwhile) +
                 " until the job ends\n");
}

void NodeGroup::leave_round_unhealthy(int round) {
  JobFailure sick;
  sick.member = options_.self.node_rank;
  sick.node_rank = options_.self.node_rank;
  sick.host = options_.self.host;
  sick.exit_code = 0;
  sick.regroup = true;  // no restart used: the next round starts at once without it
  sick.status = std::string(JobFailure::kHealthFailed) + ": " + options_.self.health;
  sick.time = utc_timestamp(std::chrono::system_clock::now());
  (void)control_->compare_set(round_key(round, "abort"), "", to_json(sick));
  waits_benched("failed its health check: " + options_.self.health);
}

}  // namespace aml

// The record of an elastic job's rounds (DESIGN §5), for the console and --summary-file: each
// round's members, who came and who went, and why it ended; and which rendezvous held the job.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan/launch_plan.hpp"
#include "rendezvous/bench.hpp"
#include "rendezvous/node_group.hpp"
#include "supervisor/failure_summary.hpp"
#include "supervisor/run_workers.hpp"

namespace aml {

class ElasticRounds {
 public:
  // A round began. On node 0 (which knows every member) the line it says: the members, and
  // who came and went since the last round; "" elsewhere.
  std::string began(const Agreement& agreed, bool node_zero);
  // The round ended (a failure, a lost node, a stop, or the end of the job).
  void ended(const RunOutcome& outcome);
  // The job's rendezvous backend, for the summary (a job with a group).
  void held_by(const RendezvousPlan& rendezvous) { rendezvous_ = rendezvous; }
  // The bench as the last round's verdict told it (every node's summary lists it).
  void benched(const std::vector<BenchedNode>& bench) {
    if (!bench.empty()) bench_ = bench;
  }
  // One node benched as this launcher learns it (the deciding node, a fixed-size job's nodes);
  // benched again (seated again at MIN, then lost or sick), its entry says the new reason.
  void benched_one(const BenchedNode& node);
  const std::vector<BenchedNode>& bench() const { return bench_; }
  // {"rendezvous": {...}, "rounds": [...]} merged into a --summary-file's JSON text (each where
  // the job has it).
  std::string with_rounds(const std::string& summary_json) const;
  bool empty() const { return rounds_.empty(); }

 private:
  struct Member {
    int node_rank = 0;
    std::string host;
    long pid = 0;
    bool operator==(const Member& other) const { return host == other.host && pid == other.pid; }
  };
  struct Round {
    int round = 0;
    int node_rank = 0;
    int node_count = 0;
    std::vector<Member> members;  // node 0 only
    std::vector<Member> came, left;
    std::string ended;  // why; "" while it runs
  };
  std::vector<Round> rounds_;
  std::optional<RendezvousPlan> rendezvous_;
  std::vector<BenchedNode> bench_;
};

// A hot spare (or a launcher that came late) of an elastic job that ended while it waited.
RunOutcome ended_while_waiting(const JobEnd& end, std::string& said);
// What the node that ends the job tells those waiting of its first failure and notice (its
// summary's, one line of JSON): their summaries name the same (JobEnd::told).
std::string told_end(const RunOutcome& outcome, const NodeIdentity& node);

}  // namespace aml

#include "elastic_rounds.hpp"

#include <algorithm>

#include "supervisor/exit_status.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {
namespace {

constexpr std::size_t kNamedOnConsole = 16;  // a 4,096-node round is not one console line

// "0 a, 1 b"; with `pids` "node 1 (b, launcher 77)": a node that went and one that came
// may share a host (several launchers on one machine).
template <typename Members>
std::string names(const Members& members, bool pids = false) {
  std::string text;
  for (std::size_t i = 0; i < members.size() && i < kNamedOnConsole; ++i) {
    const auto& m = members[i];
    text += (i ? ", " : "") + (pids ? "node " + std::to_string(m.node_rank) + " (" + m.host +
                                          ", launcher " + std::to_string(m.pid) + ")"
                                    : std::to_string(m.node_rank) + " " + m.host);
  }
  if (members.size() > kNamedOnConsole) {
    text += " and " + std::to_string(members.size() - kNamedOnConsole) + " more";
  }
  return text;
}

std::string why_it_ended(const RunOutcome& outcome) {
  if (outcome.first_failure) {
    const WorkerExit& f = *outcome.first_failure;
    return "rank " + std::to_string(f.rank) + " failed on this node";
  }
  if (outcome.remote_failure) return outcome.remote_failure->describe();
  if (outcome.stopped) return "stopped by " + signal_name(outcome.stopped->signal);
  if (outcome.hang) return "the job hung";
  if (outcome.exit_code == 0) return "complete";
  return "exit " + std::to_string(outcome.exit_code);
}

}  // namespace

std::string ElasticRounds::began(const Agreement& agreed, bool node_zero) {
  Round round;
  round.round = agreed.round;
  round.node_rank = agreed.node_rank;
  round.node_count = agreed.node_count;
  if (node_zero) {
    for (const NodeInfo& node : agreed.nodes) {
      round.members.push_back({node.node_rank, node.host, node.pid});
    }
    if (!rounds_.empty()) {
      const auto& before = rounds_.back().members;
      for (const Member& m : round.members) {
        if (std::find(before.begin(), before.end(), m) == before.end()) round.came.push_back(m);
      }
      for (const Member& m : before) {
        if (std::find(round.members.begin(), round.members.end(), m) == round.members.end())
          round.left.push_back(m);
      }
    }
  }
  rounds_.push_back(round);
  if (!node_zero) return "";
  std::string text = "aml-launch: elastic round " + std::to_string(round.round) + ": " +
                     std::to_string(round.node_count) + " nodes (" + names(round.members) + ")";
  if (!round.left.empty()) text += "; left: " + names(round.left, true);
  if (!round.came.empty() && rounds_.size() > 1) text += "; came: " + names(round.came, true);
  return text + "\n";
}

void ElasticRounds::ended(const RunOutcome& outcome) {
  if (!rounds_.empty() && rounds_.back().ended.empty()) {
    rounds_.back().ended = why_it_ended(outcome);
  }
}

void ElasticRounds::benched_one(const BenchedNode& node) {
  const auto known = std::find_if(bench_.begin(), bench_.end(), [&node](const BenchedNode& b) {
    return b.launcher == node.launcher;
  });
  if (known != bench_.end()) {
    *known = node;
  } else {
    bench_.push_back(node);
  }
}

std::string ElasticRounds::with_rounds(const std::string& summary_json) const {
  if (rounds_.empty() && !rendezvous_ && bench_.empty()) return summary_json;
  auto summary = nlohmann::ordered_json::parse(summary_json, nullptr, false);
  if (summary.is_discarded()) return summary_json;
  if (!bench_.empty()) {
    auto& benched = summary["benched"] = nlohmann::ordered_json::array();
    for (const BenchedNode& node : bench_) {
      benched.push_back(bench_json(node));
    }
  }
  if (rendezvous_) {
    summary["rendezvous"] = {{"backend", rendezvous_->backend},
                             {"endpoints", rendezvous_->endpoints},
                             {"loss", rendezvous_->loss}};
  }
  if (rounds_.empty()) return summary.dump(2) + "\n";
  auto member_json = [](const Member& m) {
    return nlohmann::ordered_json{
        {"node_rank", m.node_rank}, {"host", m.host}, {"launcher_pid", m.pid}};
  };
  auto list = [&member_json](const std::vector<Member>& members) {
    auto out = nlohmann::ordered_json::array();
    for (const Member& m : members) out.push_back(member_json(m));
    return out;
  };
  auto& rounds = summary["rounds"] = nlohmann::ordered_json::array();
  for (const Round& r : rounds_) {
    nlohmann::ordered_json j;
    j["round"] = r.round;
    j["node_rank"] = r.node_rank;
    j["node_count"] = r.node_count;
    // Node 0 saw every member; the others know only their own place.
    if (!r.members.empty()) {
      j["members"] = list(r.members);
      j["came"] = list(r.came);
      j["left"] = list(r.left);
    }
    j["ended"] = r.ended.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.ended);
    rounds.push_back(j);
  }
  return summary.dump(2) + "\n";
}

RunOutcome ended_while_waiting(const JobEnd& end, std::string& said) {
  RunOutcome outcome;
  outcome.exit_code = end.exit_code;
  outcome.told_end = end.told;
  said = "aml-launch: the job ended (exit " + std::to_string(end.exit_code) +
         ") while this node waited for a round" +
         (end.said.empty() ? "\n" : "; node 0 said:\n" + end.said);
  return outcome;
}

std::string told_end(const RunOutcome& outcome, const NodeIdentity& node) {
  const nlohmann::ordered_json summary = outcome_json(outcome, node);
  nlohmann::ordered_json told;
  told["first_failure"] = summary["first_failure"];
  told["notice"] = summary["notice"];
  return told.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace aml

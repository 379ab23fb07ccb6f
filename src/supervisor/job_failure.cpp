#include "supervisor/job_failure.hpp"

#include <nlohmann/json.hpp>

#include "supervisor/exit_status.hpp"
#include "supervisor/failure_summary.hpp"
#include "supervisor/run_workers.hpp"

namespace aml {

std::string JobFailure::describe() const {
  std::string where = "node " + std::to_string(node_rank) + (host.empty() ? "" : " (" + host + ")");
  const std::string when = time.empty() ? "" : " at " + time;
  if (rank < 0) return where + ": " + status + when;
  // A per-process launch: the launcher of that one rank.
  if (pid == 0) return "rank " + std::to_string(rank) + " on " + where + ": " + status + when;
  return "rank " + std::to_string(rank) + " (local rank " + std::to_string(local_rank) + ") on " +
         where + ", pid " + std::to_string(pid) + ", failed first at " + time + ": " + status;
}

JobFailure job_failure_of(const WorkerExit& exit, int node_rank, const std::string& host) {
  JobFailure f;
  f.node_rank = node_rank;
  f.host = host;
  f.rank = exit.rank;
  f.local_rank = exit.local_rank;
  f.pid = exit.pid;
  f.exit_code = exit_code_of(exit.wait_status);
  f.status = describe_wait_status(exit.wait_status);
  f.time = utc_timestamp(exit.when);
  f.stderr_tail = exit.stderr_tail;
  return f;
}

std::string to_json(const JobFailure& f) {
  nlohmann::ordered_json j;
  j["node_rank"] = f.node_rank;
  j["member"] = f.member;
  j["host"] = f.host;
  j["rank"] = f.rank;
  j["local_rank"] = f.local_rank;
  j["pid"] = f.pid;
  j["exit_code"] = f.exit_code;
  j["stop_signal"] = f.stop_signal;
  j["status"] = f.status;
  j["time"] = f.time;
  j["stderr_tail"] = f.stderr_tail;
  if (f.regroup) j["regroup"] = true;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::optional<JobFailure> job_failure_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    JobFailure f;
    f.node_rank = j.at("node_rank").get<int>();
    f.member = j.value("member", -1);
    f.host = j.at("host").get<std::string>();
    f.rank = j.at("rank").get<int>();
    f.local_rank = j.at("local_rank").get<int>();
    f.pid = j.at("pid").get<long>();
    f.exit_code = j.at("exit_code").get<int>();
    f.stop_signal = j.value("stop_signal", 0);
    f.status = j.at("status").get<std::string>();
    f.time = j.at("time").get<std::string>();
    f.stderr_tail = j.at("stderr_tail").get<std::vector<std::string>>();
    f.regroup = j.value("regroup", false);
    return f;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace aml

#include "supervisor/failure_summary.hpp"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <ctime>
#include <nlohmann/json.hpp>

#include "notice/notice_desk.hpp"
#include "supervisor/exit_status.hpp"

namespace aml {

std::string utc_timestamp(std::chrono::system_clock::time_point when) {
  using namespace std::chrono;
  auto millis = duration_cast<milliseconds>(when.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::size_t n = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof(text) - n, ".%03dZ", static_cast<int>(millis % 1000));
  return text;
}

namespace {

std::string tail_text(const std::vector<std::string>& tail) {
  if (tail.empty()) return "aml-launch: its stderr was empty\n";
  std::string text =
      "aml-launch: last " + std::to_string(tail.size()) + " line(s) of its stderr:\n";
  for (const std::string& line : tail) text += "  | " + line + "\n";
  return text;
}

std::string node_text(int node_rank, const std::string& host) {
  return "node " + std::to_string(node_rank) + " (" + host + ")";
}

// How this node's workers ended after a stop: "2 of 2 worker(s) ended within the grace after
// SIGINT", where some had to be, how many were killed and why.
std::string workers_text(const JobStop& stop) {
  if (stop.workers == 0) return "no worker was running";
  const int got = stop.passed_on != 0 ? stop.passed_on : SIGTERM;  // else the teardown's TERM
  std::string text = std::to_string(stop.ended_on_their_own) + " of " +
                     std::to_string(stop.workers) + " worker(s) ended within the grace after " +
                     signal_name(got);
  if (stop.escalated_to == SIGTERM && got != SIGTERM) {
    text += ", then SIGTERM (a second stop signal)";
  }
  if (!stop.launcher_killed_at.empty()) {
    text += "; its launcher was killed (SIGKILL) at " + stop.launcher_killed_at;
    if (stop.killed_after_grace > 0) {
      text += " and " + std::to_string(stop.killed_after_grace) + " worker(s) with it";
    }
  } else if (stop.killed_after_grace > 0) {
    text += ", " + std::to_string(stop.killed_after_grace) +
            (stop.escalated_to == SIGKILL ? " killed (SIGKILL) at a further stop signal"
                                          : " killed (SIGKILL) after the grace");
  }
  return text;
}

// "rank 1 (node 0, host a)" for a per-process launcher, else "node 0 (host a)".
std::string launcher_text(int rank, int node_rank, const std::string& host) {
  if (rank < 0) return node_text(node_rank, host);
  return "rank " + std::to_string(rank) + " (node " + std::to_string(node_rank) + ", " + host + ")";
}

// "SIGTERM from outside (sent by pid 7, mpirun)"
std::string signal_from_outside(const JobStop& stop) {
  std::string text = signal_name(stop.signal) + " from outside";
  if (stop.sender_pid > 0) {
    text += " (sent by pid " + std::to_string(stop.sender_pid) +
            (stop.sender.empty() ? "" : ", " + stop.sender) + ")";
  }
  return text;
}

// A stop that reached a launcher already stopping its workers for a failure or a hang (mpirun
// sends TERM to every launcher once a rank failed, then SIGKILL): named, not taken for a
// second Ctrl-C. The head is said at once, the workers' end when it comes.
std::string late_stop_head(const JobStop& stop, const NodeIdentity& node) {
  const std::string whose = node.rank >= 0 ? "its worker" : "its workers";
  return "aml-launch: " + launcher_text(node.rank, node.node_rank, node.host) + ": " +
         (stop.from_here()
              ? signal_from_outside(stop)
              : signal_name(stop.signal) + " sent to " +
                    launcher_text(stop.rank, stop.node_rank, stop.host) + "'s launcher") +
         " came at " + stop.time + " while it stopped " + whose +
         " for that: " + (stop.passed_on != 0 ? "passed on" : "not passed on (they had SIGTERM)");
}

std::string stop_text(const JobStop& stop, const NodeIdentity& node) {
  if (stop.during_teardown) return late_stop_head(stop, node) + "; " + workers_text(stop) + "\n";
  std::string text = "aml-launch: " + launcher_text(node.rank, node.node_rank, node.host) + ": ";
  if (stop.guardian_killed) {
    return text + "its launcher was killed (SIGKILL) at " + stop.time +
           ": its workers and everything they started were killed at once\n";
  }
  if (stop.from_here()) {
    text += "stopped by " + signal_from_outside(stop);
  } else {
    text += "the job was stopped by " + signal_name(stop.signal) + " sent to " +
            launcher_text(stop.rank, stop.node_rank, stop.host) + "'s launcher";
    if (stop.also_here)
      text += node.rank >= 0 ? " (this rank's got one too)" : " (this node's got one too)";
  }
  return text + " at " + stop.time + ": " + workers_text(stop) + "\n";
}

std::string failure_text(const RunOutcome& outcome, const NodeIdentity& node) {
  if (outcome.remote_failure) {
    const JobFailure& f = *outcome.remote_failure;
    std::string text;
    if (node.rank >= 0) {
      const bool this_rank = f.member_or_node() == node.rank && f.pid == 0;
      text = "aml-launch: rank " + std::to_string(node.rank) + " (node " +
             std::to_string(node.node_rank) + ") stopped its worker: " +
             (this_rank                       ? "the job lost this rank's launcher: "
              : f.node_rank == node.node_rank ? "the job failed on this node: "
                                              : "the job failed on another node: ") +
             f.describe() + "\n";
    } else if (f.regroup) {
      return "aml-launch: node " + std::to_string(node.node_rank) +
             " stopped its workers for a new round: " + f.describe() + "\n";
    } else {
      const bool this_node = f.node_rank == node.node_rank;
      text = "aml-launch: node " + std::to_string(node.node_rank) + " stopped its workers: " +
             (this_node ? "the job lost this node: " : "the job failed on another node: ") +
             f.describe() + "\n";
    }
    if (outcome.restarts > 0)
      text += "aml-launch: after " + std::to_string(outcome.restarts) + " restart(s)\n";
    if (f.rank >= 0) text += tail_text(f.stderr_tail);
    if (outcome.first_failure) {
      // Failed here too, a moment after: the job's verdict is the other one, on every node.
      const WorkerExit& own = *outcome.first_failure;
      text += "aml-launch: rank " + std::to_string(own.rank) +
              " on this node failed too, after it, at " + utc_timestamp(own.when) + ": " +
              describe_wait_status(own.wait_status) + "\n";
    }
    return text;
  }
  if (!outcome.first_failure) return {};
  const WorkerExit& f = *outcome.first_failure;
  std::string text = "aml-launch: rank " + std::to_string(f.rank) + " (local rank " +
                     std::to_string(f.local_rank) + ") on node " + std::to_string(node.node_rank) +
                     " (" + node.host + "), pid " + std::to_string(f.pid) + ", failed first at " +
                     utc_timestamp(f.when) + ": " + describe_wait_status(f.wait_status) + "\n";
  if (outcome.restarts > 0)
    text += "aml-launch: after " + std::to_string(outcome.restarts) + " restart(s)\n";
  return text + tail_text(f.stderr_tail);
}

}  // namespace

std::string failure_summary_text(const RunOutcome& outcome, const NodeIdentity& node) {
  const JobStop* stop = outcome.stopped ? &*outcome.stopped : nullptr;
  if (outcome.reported_at_once && stop != nullptr) {
    // The rest was said when the stop came: how the workers ended.
    return "aml-launch: " + launcher_text(node.rank, node.node_rank, node.host) + ": " +
           workers_text(*stop) + "\n";
  }
  std::string text = outcome.hang ? outcome.hang->text() : "";
  text += failure_text(outcome, node);
  if (stop != nullptr && (!outcome.remote_failure || stop->during_teardown)) {
    text += stop_text(*stop, node);
  }
  if (outcome.notice && outcome.exit_code == kPreemptedExitCode) {
    text += "aml-launch: the job ended for a notice: " +
            describe(*outcome.notice, std::chrono::system_clock::now()) +
            (outcome.stopped_at_notice_deadline
                 ? "; the workers still running were stopped at its deadline"
                 : "; the workers finished after it") +
            ": preempted (exit " + std::to_string(kPreemptedExitCode) +
            ", which a scheduler can retry)\n";
  }
  return text;
}

std::string late_stop_text(const RunOutcome& outcome, const NodeIdentity& node) {
  if (!outcome.stopped || !outcome.stopped->during_teardown) return "";
  std::string text = outcome.hang ? outcome.hang->text() : "";
  return text + failure_text(outcome, node) + late_stop_head(*outcome.stopped, node) + "\n";
}

nlohmann::ordered_json exit_json(const WorkerExit& exit) {
  nlohmann::ordered_json j;
  j["rank"] = exit.rank;
  j["local_rank"] = exit.local_rank;
  j["pid"] = exit.pid;
  if (WIFSIGNALED(exit.wait_status)) {
    int sig = WTERMSIG(exit.wait_status);
    j["exit_code"] = nullptr;
    j["signal"] = sig;
    j["signal_name"] = signal_name(sig);
  } else {
    j["exit_code"] = WIFEXITED(exit.wait_status) ? WEXITSTATUS(exit.wait_status) : -1;
    j["signal"] = nullptr;
    j["signal_name"] = nullptr;
  }
  j["status"] = describe_wait_status(exit.wait_status);
  j["time"] = utc_timestamp(exit.when);
  return j;
}

nlohmann::ordered_json outcome_json(const RunOutcome& outcome, const NodeIdentity& node) {
  nlohmann::ordered_json j;
  j["exit_code"] = outcome.exit_code;
  j["node_rank"] = node.node_rank;
  j["host"] = node.host;
  j["restarts"] = outcome.restarts;
  if (outcome.remote_failure) {
    // Another node's failure, as it reported it.
    j["first_failure"] = nlohmann::ordered_json::parse(to_json(*outcome.remote_failure));
    j["first_failure"]["on_another_node"] = true;
    if (outcome.first_failure) {
      nlohmann::ordered_json own = exit_json(*outcome.first_failure);
      own["stderr_tail"] = outcome.first_failure->stderr_tail;
      j["failed_here_after"] = own;
    }
  } else if (outcome.first_failure) {
    nlohmann::ordered_json f = exit_json(*outcome.first_failure);
    f["node_rank"] = node.node_rank;
    f["host"] = node.host;
    f["stderr_tail"] = outcome.first_failure->stderr_tail;
    f["on_another_node"] = false;
    j["first_failure"] = f;
  } else {
    j["first_failure"] = nullptr;
  }
  if (outcome.stopped) {
    const JobStop& stop = *outcome.stopped;
    nlohmann::ordered_json s;
    s["signal"] = stop.signal;
    s["signal_name"] = signal_name(stop.signal);
    s["from"] = stop.guardian_killed ? "launcher killed"
                : stop.from_here()   ? "outside"
                                     : "another node";
    s["node_rank"] = stop.from_here() ? node.node_rank : stop.node_rank;
    const int stop_rank = stop.from_here() ? node.rank : stop.rank;
    s["rank"] = stop_rank >= 0 ? nlohmann::ordered_json(stop_rank) : nullptr;  // per process
    s["host"] = stop.from_here() ? node.host : stop.host;
    s["sender_pid"] = stop.sender_pid > 0 ? nlohmann::ordered_json(stop.sender_pid) : nullptr;
    s["sender"] = stop.sender.empty() ? nullptr : nlohmann::ordered_json(stop.sender);
    s["also_here"] = stop.also_here;
    s["time"] = stop.time;
    s["workers"] = stop.workers;
    s["ended_on_their_own"] = stop.ended_on_their_own;
    s["killed_after_grace"] = stop.killed_after_grace;
    s["passed_on"] = stop.passed_on != 0 ? nlohmann::ordered_json(signal_name(stop.passed_on))
                                         : nlohmann::ordered_json(nullptr);
    s["escalated_to"] = stop.escalated_to != 0
                            ? nlohmann::ordered_json(signal_name(stop.escalated_to))
                            : nlohmann::ordered_json(nullptr);
    s["during_teardown"] = stop.during_teardown;
    s["launcher_killed_at"] = stop.launcher_killed_at.empty()
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(stop.launcher_killed_at);
    j["stopped"] = s;
  } else {
    j["stopped"] = nullptr;
  }
  j["hang"] = outcome.hang ? nlohmann::ordered_json::parse(outcome.hang->json_text()) : nullptr;
  if (outcome.notice) {
    nlohmann::ordered_json notice = notice_json(*outcome.notice);
    notice["preempted"] = outcome.exit_code == kPreemptedExitCode;
    notice["stopped_at_deadline"] = outcome.stopped_at_notice_deadline;
    j["notice"] = notice;
  } else {
    j["notice"] = nullptr;
  }
  if (!outcome.told_end.empty()) {
    const auto told = nlohmann::ordered_json::parse(outcome.told_end, nullptr, false);
    if (told.is_object() && j["first_failure"].is_null() && told.contains("first_failure") &&
        told["first_failure"].is_object()) {
      j["first_failure"] = told["first_failure"];
      j["first_failure"]["on_another_node"] = true;
    }
    if (told.is_object() && j["notice"].is_null() && told.contains("notice")) {
      j["notice"] = told["notice"];
    }
  }
  j["start_error"] =
      outcome.start_error ? nlohmann::ordered_json(outcome.start_error->message()) : nullptr;
  auto& workers = j["workers"] = nlohmann::ordered_json::array();
  for (const WorkerExit& exit : outcome.exits) workers.push_back(exit_json(exit));
  return j;
}

std::string run_summary_json(const RunOutcome& outcome, const NodeIdentity& node, bool final) {
  nlohmann::ordered_json body = outcome_json(outcome, node);
  nlohmann::ordered_json j;
  j["final"] = final;
  for (auto field = body.begin(); field != body.end(); ++field) j[field.key()] = *field;
  // Invalid UTF-8 in a worker's stderr is replaced, not a reason to lose the summary.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace aml

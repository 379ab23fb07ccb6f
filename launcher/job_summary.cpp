#include "job_summary.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "event_setup.hpp"
#include "supervisor/exit_status.hpp"
#include "supervisor/job_stop.hpp"
#include "util/replace_file.hpp"

namespace aml {

std::string write_summary_file(const Options& options, const RunOutcome& outcome,
                               const NodeIdentity& node, bool final, const ElasticRounds& rounds,
                               const GoodputClock& clock) {
  if (options.summary_file.empty()) return "";
  std::string summary = rounds.with_rounds(run_summary_json(outcome, node, final));
  auto parsed = nlohmann::ordered_json::parse(summary, nullptr, false);
  if (!parsed.is_discarded()) {
    parsed["time"] = clock.json();
    summary = parsed.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  if (replace_file(options.summary_file, summary)) return "";
  return "aml-launch: cannot write --summary-file " + options.summary_file + ": " +
         std::strerror(errno) + "\n";
}

int rendezvous_failed(const Options& options, const Error& error, const NodeIdentity& node,
                      const ElasticRounds& rounds, const GoodputClock& clock) {
  constexpr int kNothingStarted = 2;
  RunOutcome outcome;
  outcome.exit_code = kNothingStarted;
  outcome.start_error = error;
  const std::string said = write_summary_file(options, outcome, node, true, rounds, clock);
  const std::string text = said + "aml-launch: error: " + error.message() + "\n";
  (void)!write(STDERR_FILENO, text.data(), text.size());
  return kNothingStarted;
}

void stopped_while_waiting(int signal, long sender_pid, const Options& options,
                           const NodeIdentity& node, const ElasticRounds& rounds,
                           const GoodputClock& clock, EventLog* events) {
  RunOutcome outcome;
  outcome.exit_code = 128 + signal;
  outcome.stop_requested = true;
  JobStop stop;
  stop.signal = signal;
  stop.sender_pid = sender_pid;
  stop.sender = sender_pid > 0 ? process_name(sender_pid) : "";
  stop.time = utc_timestamp(std::chrono::system_clock::now());
  outcome.stopped = stop;
  if (events != nullptr) {
    events->write("stop", {{"signal", signal_name(signal)},
                           {"sender_pid", sender_pid > 0 ? nlohmann::ordered_json(sender_pid)
                                                         : nlohmann::ordered_json()},
                           {"sender", stop.sender.empty() ? nlohmann::ordered_json()
                                                          : nlohmann::ordered_json(stop.sender)}});
  }
  end_events(events, outcome, node);
  std::string said = write_summary_file(options, outcome, node, true, rounds, clock);
  said += failure_summary_text(outcome, node);
  said += "aml-launch: the stop came while this node waited for a round: no worker of it ran\n";
  (void)!write(STDERR_FILENO, said.data(), said.size());
}

std::string time_text(const std::string& report, const RunOutcome& outcome,
                      const GoodputClock& clock) {
  if (report.empty() && outcome.restarts == 0) return "";
  double wall = 0;
  for (double seconds : clock.totals()) wall += seconds;
  return wall < 0.05 ? "" : clock.text();  // an error at the start: no time to speak of
}

}  // namespace aml

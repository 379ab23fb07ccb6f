#include "job_summary.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

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

std::string time_text(const std::string& report, const RunOutcome& outcome,
                      const GoodputClock& clock) {
  if (report.empty() && outcome.restarts == 0) return "";
  double wall = 0;
  for (double seconds : clock.totals()) wall += seconds;
  return wall < 0.05 ? "" : clock.text();  // an error at the start: no time to speak of
}

}  // namespace aml

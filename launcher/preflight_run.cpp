// --preflight: every rank joins a communicator and checks allreduce before the command runs.
// Its output goes to the console only (the per-rank log files are the command's).
#include "preflight_run.hpp"

#include <unistd.h>

#include <iostream>

#include "artifact.hpp"
#include "output_setup.hpp"

namespace aml {

int run_preflight(const Options& options, const LaunchPlan& plan, const Env& env,
                  const NodeIdentity& node, PeerLink* peers, const RoundMaker& round_of,
                  const std::function<std::vector<RunOptions::OnFirstUse>()>& on_first_use,
                  const std::function<void(const std::string&, bool)>& say) {
  const std::string program = preflight_program();
  if (access(program.c_str(), X_OK) != 0) {
    const Error missing = invalid("--preflight", *options.preflight,
                                  "aml-preflight next to aml-launch (" + program + " is missing)");
    std::cerr << "aml-launch: error: " << missing.message() << "\n";
    return 2;
  }
  std::vector<std::string> command = {program, "--backend", *options.preflight};
  if (options.preflight_min_busbw > 0) {
    command.push_back("--min-busbw");
    command.push_back(std::to_string(options.preflight_min_busbw));
  }
  OutputOptions output = output_options(options, plan, env);
  output.log_dir.clear();
  RunOptions run_options;
  run_options.term_timeout_seconds = options.term_timeout_seconds;
  run_options.output = output;
  run_options.peers = peers;
  run_options.on_first_use = on_first_use;
  RunOutcome outcome = run_workers(
      [&](int restart) { return round_of("preflight", command, restart); }, run_options);
  if (outcome.exit_code == 0) return 0;
  std::string said;
  if (outcome.start_error)
    said = "aml-launch: cannot start the preflight: " + outcome.start_error->message() + "\n";
  said += failure_summary_text(outcome, node) + "aml-launch: the preflight failed (exit " +
          std::to_string(outcome.exit_code) + "): the command was not started\n";
  say(said, outcome.stop_requested);
  return outcome.exit_code;
}

}  // namespace aml

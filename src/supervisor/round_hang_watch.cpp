// The round's part in --hang-timeout (DESIGN §6): when the watch finds the whole job quiet, an
// inquiry looks at every rank beside the loop; a rank that moves meanwhile calls it off, and
// only an inquiry that ends gives the verdict (exit 124).
#include <signal.h>

#include "events/event_log.hpp"
#include "supervisor/round.hpp"

namespace aml {

bool Round::watching_for_hang() const {
  if (!hang_watch_.on() || verdict_.tearing_down() || inquiry_) return false;
  // A node whose workers are done goes on watching: another node's may be stuck, and any
  // node that sees the whole job quiet may declare it.
  return workers_.alive() > 0 || (told_success_ && verdict_.waiting_for_peers());
}

void Round::watch_for_hang(Clock::time_point now) {
  if (inquiry_) return follow_inquiry(now);
  // /proc and the log files are read at check times only, not at every wake-up of the relay.
  if (!watching_for_hang() || !hang_watch_.due(now)) return;
  std::vector<pid_t> pids;
  log_sizes_.resize(workers_.size());
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const WorkerProcess& w = workers_[i];
    pids.push_back(w.alive ? rank_process(w.pid) : 0);
    if (relay_.stdout_unread(i)) {
      const off_t size = log_files_[i]->size();
      if (size != log_sizes_[i]) hang_watch_.output_from(i);
      log_sizes_[i] = size;
    }
  }
  const std::optional<bool> quiet = hang_watch_.quiet(now, pids);
  if (!quiet) return;  // not a check time
  // Hung only when no rank anywhere progressed: on several nodes, when every node is quiet.
  const bool hung = options_.peers != nullptr ? options_.peers->job_quiet(*quiet) : *quiet;
  if (hung) begin_inquiry(now);
}

void Round::begin_inquiry(Clock::time_point now) {
  std::vector<HangInquiry::Target> targets;
  const double interval = std::chrono::duration<double>(hang_watch_.interval()).count();
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const WorkerProcess& w = workers_[i];
    if (!w.alive) continue;
    targets.push_back({i, w.launch.rank, w.launch.local_rank, node_rank_, w.pid,
                       hang_watch_.step(i), hang_watch_.cpu_seconds_last_interval(i), interval});
  }
  HangInquiry::Settings settings;
  settings.timeout_seconds = options_.hang_timeout_seconds;
  settings.flight_recorder_pipe_prefix = options_.flight_recorder_pipe_prefix;
  settings.flight_recorder_dump_prefix = options_.flight_recorder_dump_prefix;
  settings.tools = StackTools::find();
  HangInquiry::Hooks hooks;
  hooks.abort_for_stacks = [this](std::size_t worker, pid_t pid) {
    relay_.stderr_of(worker).capture(256 * 1024);
    kill(pid, SIGABRT);  // faulthandler writes every thread's stack, then it dies
    // Frozen, or left stopped by a tool that ran out of time: SIGABRT is the first thing it
    // handles when it runs again.
    kill(pid, SIGCONT);
  };
  hooks.freeze = [](pid_t pid) { kill(pid, SIGSTOP); };
  hooks.stacks_written = [this](std::size_t worker) {
    return !workers_[worker].alive && !relay_.stderr_of(worker).is_open();
  };
  hooks.captured_stderr = [this](std::size_t worker) {
    relay_.stderr_of(worker).drain();
    return relay_.stderr_of(worker).captured();
  };
  hooks.peers = listening() ? options_.peers : nullptr;
  if (!targets.empty()) {
    const auto whole = [](double s) { return std::to_string(static_cast<long long>(s)); };
    const std::string why = hang_watch_.ever_progressed()
                                ? "no rank showed progress for " +
                                      whole(options_.hang_timeout_seconds) + " s (--hang-timeout)"
                                : "no rank showed any progress in the " +
                                      whole(options_.hang_startup_timeout_seconds) +
                                      " s since the job started (--hang-startup-timeout)";
    consoles_.err.write("aml-launch: " + why +
                        ": looking at every rank before the job is stopped; a rank that moves "
                        "meanwhile calls it off\n");
    if (options_.events) {
      options_.events->write("hang_inquiry", {{"why", why}, {"ranks", targets.size()}});
    }
  }
  if (hooks.peers != nullptr) hooks.peers->inquiry_begun();
  inquiry_.emplace(reactor_, std::move(targets), std::move(settings), std::move(hooks), now);
  verdict_.hang_phase(HangPhase::looking);
  follow_inquiry(now);
}

void Round::follow_inquiry(Clock::time_point now) {
  if (verdict_.tearing_down()) {
    // A failure or a stop came first: it is the verdict. Ranks already given SIGABRT for
    // their stacks still die of the hang, not of a failure of their own.
    inquiry_.reset();
    if (verdict_.hang_phase() != HangPhase::committed) verdict_.hang_phase(HangPhase::none);
    return;
  }
  if (!inquiry_->committed() && !hang_declared_elsewhere()) {
    hang_watch_.read_pages(now);
    if (auto mover = hang_watch_.moved_since(inquiry_->started())) {
      const std::string why = "rank " + std::to_string(workers_[*mover].launch.rank) + " moved";
      if (call_off_inquiry(why, now)) return;
    }
  }
  inquiry_->advance(now);
  if (inquiry_->moved() && call_off_inquiry(*inquiry_->moved(), now)) return;
  if (inquiry_->committed()) verdict_.hang_phase(HangPhase::committed);
  if (!inquiry_->done()) return;
  HangReport report = inquiry_->report();
  keep_full_stacks(
      report, [this](int rank) { return log_of(rank); }, options_.hang_dir);
  inquiry_.reset();
  if (options_.events) {
    options_.events->write("hang", nlohmann::ordered_json::parse(report.json_text()));
  }
  verdict_.hang_found(std::move(report), now);
}

// The job is not hung after all: it goes on, and the watch starts its clock again. `why` is
// a copy: it may be the inquiry's own words, gone with it. False where another node declared
// the hang first: this node's ranks die of it, and what they show on the way is no progress.
bool Round::call_off_inquiry(std::string why, Clock::time_point now) {
  if (listening() && !options_.peers->call_off_hang()) return false;
  inquiry_.reset();
  verdict_.hang_phase(HangPhase::none);
  hang_watch_.moved(now);
  consoles_.err.write("aml-launch: hang inquiry called off: " + why + "\n");
  if (options_.events) options_.events->write("hang_called_off", {{"why", why}});
  return true;
}

// Another node committed this inquiry (its ranks got SIGABRT): this node cannot call it off.
bool Round::hang_declared_elsewhere() {
  return inquiry_ && listening() && options_.peers->hang_declared();
}

}  // namespace aml

#include "supervisor/round.hpp"

#include <sys/epoll.h>
#include <sys/wait.h>

#include "events/event_log.hpp"
#include "notice/notice_desk.hpp"
#include "supervisor/exit_status.hpp"
#include "supervisor/failure_summary.hpp"
#include "util/failpoint.hpp"

namespace aml {
namespace {

std::chrono::milliseconds seconds_to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

}  // namespace

Round::Round(const RunOptions& options, const sigset_t& original_mask, int signal_fd,
             const std::vector<std::unique_ptr<RankLog>>& log_files, Consoles& consoles)
    : options_(options),
      node_rank_(options.node_rank >= 0 || options.peers == nullptr ? options.node_rank
                                                                    : options.peers->member()),
      log_files_(log_files),
      consoles_(consoles),
      verdict_(*this,
               std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(options.term_timeout_seconds)),
               options.peers != nullptr ? options.peers->member() : -1),
      workers_(original_mask),
      relay_(reactor_, options.output,
             std::chrono::duration_cast<Clock::duration>(
                 std::chrono::duration<double>(options.term_timeout_seconds)),
             log_files, consoles, [this](std::size_t index) { hang_watch_.output_from(index); }),
      inbox_(signal_fd, {[this] {
                           EventLog::Burst exits(options_.events);
                           workers_.reap([this](pid_t p, int s, int i) { on_reaped(p, s, i); });
                         },
                         [this] { on_guardian_lost(); },
                         [this](int sig, long sender) { on_stop(sig, sender); },
                         [this](int sig) { pass_on(sig); }}),
      hang_watch_(seconds_to_ms(options.hang_timeout_seconds),
                  seconds_to_ms(options.hang_startup_timeout_seconds)),
      stragglers_(
          {options.straggler_check_seconds, options.straggler_share, options.bench_stragglers,
           options.flight_recorder_pipe_prefix, options.flight_recorder_dump_prefix, node_rank_},
          options.peers, options.events,
          [this](const std::string& line) { consoles_.err.write(line); }) {
  if (options.guardian_loss_is_node_loss) verdict_.guardian_loss_is_node_loss();
}

RunOutcome Round::run(std::vector<WorkerLaunch> launches) {
  reactor_.add(inbox_.fd(), EPOLLIN, [this](std::uint32_t) { inbox_.read_all(); });
  if (listening() && options_.peers->fd() >= 0) {
    reactor_.add(options_.peers->fd(), EPOLLIN, [this](std::uint32_t) { peers_readable_ = true; });
  }
  listen_for_notices();
  relay_.count_shown(launches);
  {
    EventLog::Burst spawns(options_.events);
    for (std::size_t i = 0; i < launches.size(); ++i) {
      if (!start(std::move(launches[i]), i)) break;
    }
  }
  failpoint("workers-started");  // a test's fault: the supervisor lost as its workers run
  if (options_.on_first_use) {
    for (RunOptions::OnFirstUse& use : options_.on_first_use()) {
      reactor_.add(use.fd, EPOLLIN, [this, fd = use.fd, start = use.start](std::uint32_t) {
        reactor_.remove(fd);  // the reactor holds a copy of this handler while it runs
        start();
      });
    }
  }
  while (running()) {
    if (workers_.alive() == 0) workers_gone();
    reactor_.wait(next_deadline(Clock::now()));
    after_events(Clock::now());
  }
  sweep();
  stragglers_.round_over();
  RunOutcome outcome = verdict_.final_outcome();
  outcome.reported_at_once = reported_at_once_;
  if (first_failed_ >= 0 && outcome.first_failure) {
    outcome.first_failure->stderr_tail = relay_.stderr_tail(first_failed_, 20);
  }
  for (const WorkerProcess& w : workers_.all()) {
    outcome.exits.push_back(
        {w.launch.rank, w.launch.local_rank, w.pid, w.wait_status, w.ended, {}});
  }
  return outcome;
}

bool Round::running() const {
  // A committed inquiry finishes (the stacks, the other nodes' places) after its ranks died.
  return workers_.alive() > 0 || relay_.open_streams() > 0 || verdict_.waiting_for_peers() ||
         relay_.consoles_blocked() || (inquiry_ && inquiry_->committed());
}

void Round::after_events(Clock::time_point now) {
  relay_.after_events();
  watch_for_hang(now);
  check_stragglers(now);
  if (listening()) hear_peers(now);
  hear_notices(now);
  verdict_.tick(now);
  relay_.tick(now);
}

// --straggler-check: samples while every rank runs, and not while a hang is looked into.
void Round::check_stragglers(Clock::time_point now) {
  if (!stragglers_.on() || verdict_.tearing_down() || inquiry_) return;
  stragglers_.advance(now, [this] {
    std::vector<StragglerCheck::Rank> ranks;
    for (const WorkerProcess& w : workers_.all()) {
      if (w.alive) ranks.push_back({w.launch.rank});
    }
    return ranks;
  });
}

std::optional<Round::Clock::time_point> Round::next_deadline(Clock::time_point now) const {
  auto at = earliest(verdict_.deadline(), relay_.deadline(now));
  if (options_.notices) at = earliest(at, options_.notices->next_deadline());
  if (listening())
    at = earliest(at, now + std::chrono::milliseconds(options_.peers->next_poll_ms()));
  if (watching_for_hang()) {
    at = earliest(at, now + std::chrono::milliseconds(hang_watch_.next_check_ms(now)));
  }
  if (stragglers_.on()) at = earliest(at, stragglers_.deadline(now));
  if (inquiry_) {
    // The progress pages are read this often while it looks: a rank that moves calls it off.
    at = earliest(earliest(at, inquiry_->deadline()), now + hang_watch_.interval());
  }
  return at;
}

bool Round::start(WorkerLaunch launch, std::size_t index) {
  auto ends = relay_.prepare(launch, index);
  if (!ends) {
    verdict_.start_failed(ends.error(), Clock::now());
    return false;
  }
  // --hang-timeout: a progress page of its own (progress/progress_page.hpp).
  const int progress_fd = hang_watch_.on() ? hang_watch_.add_worker() : -1;
  if (progress_fd >= 0) {
    launch.environ.push_back(std::string(kProgressFdVariable) + "=" + std::to_string(progress_fd));
  }
  if (options_.notices && !options_.notices->settings().file.empty())
    launch.environ.push_back("AML_LAUNCH_NOTICE_FILE=" + options_.notices->settings().file);
  const int rank = launch.rank;
  const int local_rank = launch.local_rank;
  std::string binding_refused;
  auto pid = workers_.spawn(std::move(launch), *ends, progress_fd, binding_refused);
  if (!pid) {
    verdict_.start_failed(pid.error(), Clock::now());
    return false;
  }
  if (options_.events) {
    options_.events->write("worker_started", {{"local_rank", local_rank}, {"pid", *pid}}, rank);
  }
  if (!binding_refused.empty()) {
    consoles_.err.write("aml-launch: warning: rank " + std::to_string(rank) +
                        " runs without the placement --bind gave it: the kernel refused " +
                        binding_refused + "\n");
  }
  relay_.attach(index);
  verdict_.worker_started();
  return true;
}

// This node's workers are all gone: what they left is swept, and where they all finished
// well, the other nodes hear so.
void Round::workers_gone() {
  sweep();
  if (relay_.open_streams() == 0 && verdict_.waiting_for_peers() && !told_success_) {
    told_success_ = true;
    options_.peers->local_success();
    // --hang-timeout: nothing of this node's runs any more, so nothing of it progresses.
    if (hang_watch_.on()) options_.peers->job_quiet(true);
  }
}

void Round::sweep() {
  EventLog::Burst exits(options_.events);
  workers_.sweep([this](pid_t p, int s, int i) { on_reaped(p, s, i); });
  if (!swept_) {
    swept_ = true;
    relay_.swept();
  }
}

void Round::on_reaped(pid_t pid, int status, int index) {
  if (index < 0) {
    if (inquiry_) inquiry_->reaped(pid);  // one of its tools, perhaps
    return;
  }
  const auto i = static_cast<std::size_t>(index);
  const WorkerProcess& w = workers_[i];
  const WorkerExit exit{w.launch.rank, w.launch.local_rank, pid, status, w.ended, {}};
  auto last_stderr = [this, i] {
    relay_.drain(i);  // what it wrote before it died goes with the news
    return relay_.stderr_tail(i, 20);
  };
  // Another node declared the hang: ranks here that end now (a peer gone, SIGABRT) die of it.
  const bool hung_elsewhere = inquiry_ && !inquiry_->committed() && hang_declared_elsewhere();
  if (hung_elsewhere) verdict_.hang_phase(HangPhase::committed);
  if (options_.events) options_.events->write("worker_exited", exit_json(exit), exit.rank);
  if (verdict_.worker_ended(exit, last_stderr, Clock::now())) {
    first_failed_ = index;
    if (options_.events) {
      nlohmann::ordered_json failure = exit_json(exit);
      failure["stderr_tail"] = relay_.stderr_tail(i, 20);
      options_.events->write("failure", std::move(failure), exit.rank);
    }
  }
  const bool finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (inquiry_ && !inquiry_->committed() && finished && !hung_elsewhere) {
    // Its last lines come with its end: a rank that printed and then ended moved first.
    relay_.drain(i);
    hang_watch_.read_pages(Clock::now());
    const auto mover = hang_watch_.moved_since(inquiry_->started());
    const std::size_t named = mover ? *mover : i;
    call_off_inquiry(
        "rank " + std::to_string(workers_[named].launch.rank) + (mover ? " moved" : " finished"),
        Clock::now());
  }
}

void Round::on_stop(int sig, long sender) {
  if (options_.notices && sig == options_.notices->settings().launcher_signal) {
    options_.notices->signal_came(sig);  // --notice-signal HUP: a notice, not a stop
    return;
  }
  relay_.stop_requested();
  const auto now = std::chrono::system_clock::now();
  const std::string sender_name = process_name(sender);
  if (options_.events) {
    options_.events->write(
        "stop", {{"signal", signal_name(sig)},
                 {"sender_pid", sender > 0 ? nlohmann::ordered_json(sender) : nullptr},
                 {"sender", sender_name.empty() ? nullptr : nlohmann::ordered_json(sender_name)}});
  }
  verdict_.stop_from_outside(sig, sender, sender_name, utc_timestamp(now), Clock::now());
  const auto& stop = verdict_.outcome().stopped;
  if (stop && stop->during_teardown && !reported_at_once_ && options_.report_at_once) {
    reported_at_once_ = true;
    RunOutcome so_far = verdict_.final_outcome();
    if (first_failed_ >= 0 && so_far.first_failure) {
      so_far.first_failure->stderr_tail = relay_.stderr_tail(first_failed_, 20);
    }
    consoles_.err.write(options_.report_at_once(so_far));
  }
}

void Round::on_guardian_lost() {
  relay_.stop_requested();
  if (options_.events) options_.events->write("launcher_killed");
  verdict_.guardian_lost(utc_timestamp(std::chrono::system_clock::now()),
                         verdict_.waiting_for_peers(), Clock::now());
}

std::optional<JobFailure> Round::report_to_peers(const JobFailure& failure) {
  return options_.peers->report(failure);
}

void Round::hear_peers(Clock::time_point now) {
  const bool readable = peers_readable_;
  peers_readable_ = false;
  PeerNews news = options_.peers->poll(readable);
  if (news.notice && options_.notices) options_.notices->heard_elsewhere(std::move(*news.notice));
  const bool heard_before = verdict_.outcome().remote_failure.has_value();
  verdict_.peer_news(news, now);
  const auto& heard = verdict_.outcome().remote_failure;
  if (options_.events && heard && !heard_before && !heard->regroup) {
    // Another node failed first, or was lost: this node's workers stop for it.
    options_.events->write(heard->launcher_lost() ? "node_lost" : "failure_elsewhere",
                           {{"node_rank", heard->node_rank},
                            {"host", heard->host},
                            {"rank", heard->rank >= 0 ? nlohmann::ordered_json(heard->rank)
                                                      : nlohmann::ordered_json(nullptr)},
                            {"status", heard->status},
                            {"time", heard->time}});
  }
  // The link has said its last word: a closed socket would keep waking the loop.
  if (verdict_.peers_done() && options_.peers->fd() >= 0) reactor_.remove(options_.peers->fd());
}

RankLog* Round::log_of(int rank) const {
  for (std::size_t i = 0; i < workers_.size() && i < log_files_.size(); ++i) {
    if (workers_[i].launch.rank == rank) return log_files_[i].get();
  }
  return nullptr;
}

}  // namespace aml

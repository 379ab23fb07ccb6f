#include "supervisor/run_workers.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "supervisor/console.hpp"
#include "supervisor/descendants.hpp"
#include "supervisor/exit_status.hpp"
#include "supervisor/failure_summary.hpp"
#include "supervisor/guardian.hpp"
#include "supervisor/hang_inquiry.hpp"
#include "supervisor/hang_watch.hpp"
#include "supervisor/log_tail.hpp"
#include "supervisor/output_stream.hpp"
#include "supervisor/peer_link.hpp"
#include "supervisor/rank_log.hpp"
#include "supervisor/spawn.hpp"
#include "supervisor/stack_collection.hpp"
#include "util/expand_fields.hpp"
#include "util/make_directories.hpp"

namespace aml {

std::string log_file_name(int rank) { return "std_log_process_" + std::to_string(rank) + ".txt"; }

std::string expand_tag(const std::string& tag_template, int rank, int local_rank) {
  return expand_fields(tag_template, {{"rank", rank}, {"local_rank", local_rank}});
}

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPipeBytes = 1 << 20;  // fewer wake-ups for chatty workers
// After the last worker and every leftover process are gone, how long to wait for pipes that
// something outside our reach still holds open.
constexpr auto kDrainGrace = std::chrono::seconds(2);

Error system_error(const std::string& what, const std::string& target) {
  return invalid(what, target, std::string("to work (") + std::strerror(errno) + ")");
}

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

std::optional<Pipe> make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  fcntl(fds[0], F_SETPIPE_SZ, kPipeBytes);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The launcher's stdout and stderr, for the whole run.
struct Consoles {
  Console out{STDOUT_FILENO};
  Console err{STDERR_FILENO};
};

struct Worker {
  WorkerLaunch launch;
  pid_t pid = 0;
  bool alive = false;
  int wait_status = 0;
  std::chrono::system_clock::time_point ended;
  // stdout: a pipe, or straight into the log file (read back for the console by out_tail,
  // or not at all for a rank the console does not show)
  std::unique_ptr<OutputStream> out;
  std::unique_ptr<LogTail> out_tail;
  std::unique_ptr<OutputStream> err;
  off_t log_size_seen = 0;  // stdout straight into its log file: growth is progress

  int open_streams() const {
    return (out && out->is_open()) + (out_tail && out_tail->is_open()) + err->is_open();
  }
  void drain_pipes() {
    if (out) out->drain();
    err->drain();
  }
};

// One round: every local worker from start to end, and nothing of theirs left afterwards.
class Round {
 public:
  Round(const RunOptions& options, const sigset_t& original_mask, int signal_fd,
        const std::vector<std::unique_ptr<RankLog>>& log_files, Consoles& consoles)
      : options_(options),
        original_mask_(original_mask),
        signal_fd_(signal_fd),
        log_files_(log_files),
        consoles_(consoles),
        hang_watch_(std::chrono::milliseconds(
            static_cast<long long>(options.hang_timeout_seconds * 1000))) {}

  RunOutcome run(std::vector<WorkerLaunch> launches) {
    epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
    watch(signal_fd_, kSignalKey);
    if (options_.peers != nullptr && options_.peers->fd() >= 0) {
      watch(options_.peers->fd(), kPeersKey);
    }
    shown_workers_ = static_cast<int>(
        std::count_if(launches.begin(), launches.end(),
                      [this](const WorkerLaunch& launch) { return shown(launch.local_rank); }));
    for (std::size_t i = 0; i < launches.size(); ++i) {
      if (!start(std::move(launches[i]), i)) break;
    }
    while (alive_ > 0 || open_streams() > 0 || waiting_for_peers() || consoles_blocked()) {
      if (alive_ == 0 && !swept_) sweep();
      if (alive_ == 0 && open_streams() == 0 && waiting_for_peers() && !told_success_) {
        told_success_ = true;
        options_.peers->local_success();
        // --hang-timeout: nothing of this node's runs any more, so nothing of it progresses.
        if (hang_watch_.on()) options_.peers->job_quiet(true);
      }
      wait_once();
    }
    sweep();
    for (const Worker& w : workers_) {
      outcome_.exits.push_back(
          {w.launch.rank, w.launch.local_rank, w.pid, w.wait_status, w.ended, {}});
    }
    const bool failed =
        outcome_.first_failure || outcome_.remote_failure || outcome_.start_error || outcome_.hang;
    if (outcome_.stopped && !failed) outcome_.exit_code = 128 + outcome_.stopped->signal;
    return outcome_;
  }

  bool stop_requested() const { return stop_requested_; }

 private:
  static constexpr std::uint64_t kSignalKey = ~0ull;
  static constexpr std::uint64_t kPeersKey = ~1ull;
  static constexpr std::uint64_t kLogWritesKey = ~2ull;
  static constexpr std::uint64_t kConsoleKey = ~3ull;  // and ~4: stdout, stderr

  void watch(int fd, std::uint64_t key, std::uint32_t events = EPOLLIN, int op = EPOLL_CTL_ADD) {
    epoll_event event{};
    event.events = events;
    event.data.u64 = key;
    epoll_ctl(epoll_.get(), op, fd, &event);
  }

  bool shown(int local_rank) const {
    const OutputOptions& o = options_.output;
    return !o.console_local_ranks || o.console_local_ranks->count(local_rank) > 0;
  }

  bool start(WorkerLaunch launch, std::size_t index) {
    const OutputOptions& o = options_.output;
    const bool shown = this->shown(launch.local_rank);
    std::string tag = expand_tag(o.tag_template, launch.rank, launch.local_rank);
    RankLog* log = index < log_files_.size() ? log_files_[index].get() : nullptr;
    StreamSinks console{shown ? &consoles_.out : nullptr, tag, nullptr, false};
    // The only worker on a terminal, untagged, without a log file: its stdout is the
    // terminal itself (inherited), so that it stays a terminal for the worker (isatty:
    // progress bars, colours) as without a launcher. Pipes and files keep the relay: it hands
    // on whole lines only, which is what keeps ranks apart where mpirun or srun merge their
    // pipes, and stderr lines out of stdout's where both go to one file (2>&1).
    const bool stdout_inherited =
        shown && tag.empty() && log == nullptr && shown_workers_ == 1 && isatty(STDOUT_FILENO);
    if (stdout_inherited && launch.python_unbuffered_added) {
      // Python line-buffers a terminal by itself, so each line is one write. Unbuffered, a
      // print is several writes, and where mpirun gives every rank a pty and merges them,
      // ranks' lines would mix mid-line.
      std::erase(launch.environ, std::string("PYTHONUNBUFFERED=1"));
    }

    // stdout straight into the log file where there is one (and the console, if it shows
    // this rank, can follow the file); else through a pipe.
    UniqueFd stdout_file;
    std::unique_ptr<LogTail> tail;
    if (log != nullptr && (!shown || (log->readable() && log_writes() >= 0))) {
      if (shown) {
        tail = std::make_unique<LogTail>(*log, console);  // from the file's end before the start
        if (!tail->watch_with(log_writes())) tail.reset();
      }
      if (!shown || tail) stdout_file = log->open_for_worker();
      if (!stdout_file) tail.reset();
    }
    std::optional<Pipe> out;
    if (!stdout_file && !stdout_inherited && !(out = make_pipe())) {
      return fail_to_start(system_error("pipe2", "worker output"));
    }
    auto err = make_pipe();
    if (!err) return fail_to_start(system_error("pipe2", "worker output"));
    // Only local rank 0 reads the launcher's stdin, as with mpirun; the others read nothing.
    UniqueFd null_input;
    if (launch.local_rank != 0) null_input.reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
    // --hang-timeout: a progress page of its own (progress/progress_page.hpp).
    const int progress_fd = hang_watch_.on() ? hang_watch_.add_worker() : -1;
    if (progress_fd >= 0) {
      launch.environ.push_back(std::string(kProgressFdVariable) + "=" +
                               std::to_string(progress_fd));
    }
    SpawnRequest request{launch.argv,
                         launch.environ,
                         original_mask_,
                         null_input.get(),
                         stdout_file ? stdout_file.get()
                         : out       ? out->write.get()
                                     : -1,
                         err->write.get(),
                         progress_fd};
    auto pid = spawn_worker(request);
    if (!pid) return fail_to_start(pid.error());
    Worker worker;
    worker.launch = std::move(launch);
    worker.pid = *pid;
    worker.alive = true;
    if (out) {
      console.log = log;
      worker.out = std::make_unique<OutputStream>(std::move(out->read), console);
      watch(worker.out->fd(), 2 * index);
      worker.out->watch_with(epoll_.get());
    }
    worker.out_tail = std::move(tail);
    worker.err = std::make_unique<OutputStream>(
        std::move(err->read), StreamSinks{shown ? &consoles_.err : nullptr, tag, log, true});
    watch(worker.err->fd(), 2 * index + 1);
    worker.err->watch_with(epoll_.get());
    workers_.push_back(std::move(worker));
    ++alive_;
    return true;
  }

  // One inotify instance for the round's log files, made when first needed; -1 if there can
  // be none (the per-user limit on instances), and then stdout goes through pipes.
  int log_writes() {
    if (!log_writes_tried_) {
      log_writes_tried_ = true;
      log_writes_.reset(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
      if (log_writes_) watch(log_writes_.get(), kLogWritesKey);
    }
    return log_writes_.get();
  }

  // Which log files were written to: their tails have something to read.
  void take_log_writes() {
    alignas(inotify_event) char events[4096];
    ssize_t n;
    while ((n = read(log_writes_.get(), events, sizeof(events))) > 0) {
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(events + at);
        for (Worker& w : workers_) {
          // An overflowed queue names no file: every tail looks.
          if (w.out_tail && (event->wd == w.out_tail->watch_descriptor() || event->wd < 0)) {
            w.out_tail->changed();
          }
        }
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
  }

  void stop_console_catch_up() {
    for (Worker& w : workers_) {
      if (w.out_tail) w.out_tail->close_now();
    }
  }

  bool tails_pending() const {
    if (relays_paused_) return false;
    for (const Worker& w : workers_) {
      if (w.out_tail && w.out_tail->pending()) return true;
    }
    return false;
  }

  bool consoles_blocked() const { return consoles_.out.blocked() || consoles_.err.blocked(); }

  // While a console takes nothing, no relay reads (pipes stay out of the readable events,
  // tails wait): the workers' pipes fill and hold them, their log files keep what they write,
  // and nothing piles up in the launcher. It goes on with signals, failures and peers.
  void pause_relays_while_blocked() {
    if (consoles_blocked() && (stop_requested_ || console_stuck_at_the_end())) {
      // Stopping, or the job is over and the console took nothing for a grace period: the
      // log files have all of it.
      if (consoles_.out.blocked()) consoles_.out.give_up();
      if (consoles_.err.blocked()) consoles_.err.give_up();
    }
    Console* consoles[2] = {&consoles_.out, &consoles_.err};
    for (int i = 0; i < 2; ++i) {
      if (consoles[i]->blocked() != console_watched_[i]) {
        console_watched_[i] = consoles[i]->blocked();
        if (console_watched_[i]) {
          watch(consoles[i]->fd(), kConsoleKey - static_cast<std::uint64_t>(i), EPOLLOUT);
        } else {
          epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, consoles[i]->fd(), nullptr);
        }
      }
    }
    const bool pause = consoles_blocked();
    if (pause == relays_paused_) return;
    relays_paused_ = pause;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      Worker& w = workers_[i];
      const std::uint32_t events = pause ? 0u : std::uint32_t{EPOLLIN};
      if (w.out && w.out->is_open()) watch(w.out->fd(), 2 * i, events, EPOLL_CTL_MOD);
      if (w.err->is_open()) watch(w.err->fd(), 2 * i + 1, events, EPOLL_CTL_MOD);
    }
  }

  bool console_stuck_at_the_end() const {
    if (!swept_) return false;
    auto last = std::max(consoles_.out.last_progress(), consoles_.err.last_progress());
    return Clock::now() >= last + grace();
  }

  Clock::duration grace() const {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(options_.term_timeout_seconds));
  }

  bool fail_to_start(Error error) {
    outcome_.start_error = std::move(error);
    outcome_.exit_code = 127;  // as a shell reports a command it cannot run
    begin_teardown();
    return false;
  }

  // This node's workers all finished well: the round goes on until every node's have.
  bool waiting_for_peers() const {
    return options_.peers != nullptr && !peers_stopped_ && outcome_.exit_code == 0 &&
           !outcome_.start_error && !stop_requested_;
  }

  int open_streams() const {
    int open = 0;
    for (const Worker& w : workers_) open += w.open_streams();
    return open;
  }

  void wait_once() {
    int timeout_ms = -1;
    auto at_most = [&timeout_ms](int ms) {
      if (ms >= 0 && (timeout_ms < 0 || ms < timeout_ms)) timeout_ms = ms;
    };
    if (tearing_down_ && !killed_ && !swept_) at_most(milliseconds_until(deadline_));
    if (swept_ && open_streams() > 0 && !relays_paused_) {
      at_most(milliseconds_until(drain_deadline_));
    }
    if (swept_ && consoles_blocked()) {
      at_most(milliseconds_until(
          std::max(consoles_.out.last_progress(), consoles_.err.last_progress()) + grace()));
    }
    const bool listening = options_.peers != nullptr && !peers_stopped_;
    if (listening) at_most(options_.peers->next_poll_ms());
    if (tails_pending()) at_most(0);
    if (watching_for_hang()) at_most(hang_watch_.next_check_ms(Clock::now()));
    if (inquiry_ && !outcome_.hang) at_most(milliseconds_until(inquiry_->deadline()));
    epoll_event events[64];
    int n = epoll_wait(epoll_.get(), events, 64, timeout_ms);
    if (n < 0 && errno != EINTR) n = 0;
    bool peers_readable = false;
    for (int i = 0; i < n; ++i) {
      if (events[i].data.u64 == kSignalKey) {
        take_signals();
      } else if (events[i].data.u64 == kPeersKey) {
        peers_readable = true;
      } else if (events[i].data.u64 == kLogWritesKey) {
        take_log_writes();
      } else if (events[i].data.u64 == kConsoleKey) {
        consoles_.out.flush();
      } else if (events[i].data.u64 == kConsoleKey - 1) {
        consoles_.err.flush();
      } else {
        Worker& w = workers_[events[i].data.u64 / 2];
        (events[i].data.u64 % 2 == 0 ? w.out : w.err)->drain();
        hang_watch_.output_from(events[i].data.u64 / 2);
      }
    }
    for (Worker& w : workers_) {
      if (w.out_tail && w.out_tail->pending() && !relays_paused_) {
        w.out_tail->drain();
        hang_watch_.output_from(static_cast<std::size_t>(&w - workers_.data()));
      }
    }
    watch_for_hang();
    pause_relays_while_blocked();
    if (listening) hear_peers(peers_readable);
    if (tearing_down_ && !killed_ && Clock::now() >= deadline_) {
      killed_ = true;
      signal_workers(SIGKILL);
    }
    if (swept_ && !relays_paused_ && Clock::now() >= drain_deadline_) {
      for (Worker& w : workers_) {
        if (w.out) w.out->close();
        w.err->close();
      }
    }
  }

  static int milliseconds_until(Clock::time_point when) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left + 1, 0, 3600 * 1000));
  }

  void hear_peers(bool readable) {
    PeerNews news = options_.peers->poll(readable);
    if (!news.failure && !news.complete) return;
    // The link has said its last word: stop watching it, or a closed socket would keep
    // waking the loop.
    peers_stopped_ = true;
    if (options_.peers->fd() >= 0) {
      epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, options_.peers->fd(), nullptr);
    }
    if (!news.failure) return;
    const JobFailure& heard = *news.failure;
    // The first report in the job is the one every node names; it may be this node's own
    // failure or stop, heard back.
    const bool own = heard.member_or_node() == options_.peers->member();
    if (own && (heard.stop_signal != 0 || heard.pid != 0)) return;
    if (heard.stop_signal != 0) {
      hear_stop(heard);
      return;
    }
    if (outcome_.first_failure || outcome_.remote_failure || outcome_.start_error) return;
    if (inquiry_) return;  // hung: this node names the hang itself, as every node does
    // Reported before this node's stop, if any: a failure is still a failure.
    outcome_.remote_failure = heard;
    outcome_.exit_code = heard.exit_code;
    begin_teardown();
  }

  // This launcher got a stop too, but `first` (another member's) came first: it is named.
  static void name_first_stop(JobStop& stop, const JobFailure& first) {
    stop.node_rank = first.node_rank;
    stop.host = first.host;
    stop.rank = first.rank;
    stop.time = first.time;
    stop.also_here = true;
  }

  // Another node's launcher was stopped first: this node stops the same way (INT stays INT).
  void hear_stop(const JobFailure& heard) {
    if (outcome_.stopped) {
      // Stopped here too, but that node's signal came first: it is the one named.
      name_first_stop(*outcome_.stopped, heard);
      return;
    }
    if (outcome_.first_failure || outcome_.remote_failure || outcome_.start_error) return;
    JobStop stop;
    stop.signal = heard.stop_signal;
    stop.node_rank = heard.node_rank;
    stop.host = heard.host;
    stop.rank = heard.rank;
    stop.time = heard.time;
    start_stop(std::move(stop));
  }

  // This node failed first (as far as it knows): the other nodes must stop too. Where another
  // node's failure was reported a moment before, that one is the job's (one verdict): this
  // node exits with its status and names it, its own failure coming second.
  // Returns the job's first report where it is another member's.
  std::optional<JobFailure> tell_peers(JobFailure failure) {
    if (options_.peers == nullptr || peers_stopped_) return std::nullopt;
    auto first = options_.peers->report(failure);
    if (!first || first->member_or_node() == options_.peers->member()) return std::nullopt;
    if (first->stop_signal != 0 || failure.stop_signal != 0 || outcome_.remote_failure ||
        outcome_.start_error || inquiry_) {
      return first;
    }
    outcome_.remote_failure = *first;
    outcome_.exit_code = first->exit_code;
    return first;
  }

  void take_signals() {
    signalfd_siginfo info;
    while (read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
      int sig = static_cast<int>(info.ssi_signo);
      if (sig == SIGCHLD) {
        reap();
      } else if (sig == guardian_lost_signal()) {
        guardian_lost();
      } else if (duplicates_.is_copy(sig, origin_of(info))) {
        continue;  // sent to the guardian and to this process at once: one signal
      } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
        stop_from_outside(sig, origin_of(info).sender);
      } else {
        signal_workers(sig);  // QUIT, USR1, USR2: the workers' business
      }
    }
  }

  // INT, TERM or HUP sent to this launcher: the job stops, and that is no failure.
  void stop_from_outside(int sig, long sender) {
    // Asked to stop while the console catches up with what the workers wrote: it stops there
    // (the log files hold all of it).
    if (swept_) stop_console_catch_up();
    stop_requested_ = true;
    if (++stop_signals_ > 1) {
      escalate_stop();
      return;
    }
    if (outcome_.stopped && !outcome_.stopped->from_here()) {
      // Another member's stop came first and this one is already stopping (a scheduler signals
      // every task): the first stays the one named, everywhere.
      outcome_.stopped->also_here = true;
      return;
    }
    // Also where every worker had ended: the launcher was stopped before it was done (the
    // console's catching up, the other nodes' end).
    JobStop stop;
    stop.signal = sig;
    stop.sender_pid = sender;
    stop.sender = process_name(sender);
    stop.time = utc_timestamp(std::chrono::system_clock::now());
    JobFailure record;
    record.stop_signal = sig;
    record.exit_code = 128 + sig;
    record.status = "its launcher was stopped by " + signal_name(sig) + " from outside";
    record.time = stop.time;
    auto first = tell_peers(record);
    if (first && first->stop_signal != 0) {
      // Another member was stopped a moment before (a scheduler signals every task): that one is
      // named, here as there.
      stop.signal = first->stop_signal;
      name_first_stop(stop, *first);
    }
    start_stop(std::move(stop));
  }

  // The workers get the stop's own signal (a Python worker's KeyboardInterrupt handler runs)
  // and --term-timeout to end on their own; then SIGKILL.
  void start_stop(JobStop stop) {
    stop.workers = alive_;
    stop_signal_ = stop.signal;
    outcome_.stopped = std::move(stop);
    if (!tearing_down_) {
      tearing_down_ = true;
      deadline_ = Clock::now() + grace();
      signal_workers(SIGCONT);  // a stopped worker could not act on it
    }
    // In a failure's teardown already: its grace goes on, the workers hear of the stop too.
    signal_workers(stop_signal_);
  }

  // A second stop signal: TERM now (and a new grace) where the workers have not had it yet,
  // else SIGKILL; a third: SIGKILL.
  void escalate_stop() {
    if (killed_ || !tearing_down_) return;
    if (!sent(SIGTERM) && stop_signals_ == 2) {
      deadline_ = Clock::now() + grace();
      signal_workers(SIGCONT);
      signal_workers(SIGTERM);
      return;
    }
    killed_ = true;
    signal_workers(SIGKILL);
  }

  // The launcher's first process (its guardian) was killed, surely by SIGKILL: so are the
  // workers, at once, and everything they started (the sweep).
  void guardian_lost() {
    stop_requested_ = true;
    if (alive_ > 0 || waiting_for_peers()) {
      JobStop stop;
      stop.signal = SIGKILL;
      stop.guardian_killed = true;
      stop.time = utc_timestamp(std::chrono::system_clock::now());
      JobFailure record;
      record.stop_signal = SIGKILL;
      record.exit_code = 128 + SIGKILL;
      record.status = "its launcher was killed";
      record.time = stop.time;
      tell_peers(record);
      if (!outcome_.stopped) start_stop(std::move(stop));
    }
    tearing_down_ = true;
    killed_ = true;
    signal_workers(SIGKILL);
  }

  bool sent(int sig) const { return (sent_signals_ & (1ull << sig)) != 0; }

  static SignalOrigin origin_of(const signalfd_siginfo& info) {
    return signal_origin(static_cast<long>(info.ssi_pid), info.ssi_code, info.ssi_int);
  }

  // Ended by what the stop sent it: killed by that signal, or exited 128+N for it as shells
  // and wrappers report it.
  bool ended_by_stop(int status) const {
    int sig = WIFSIGNALED(status)                              ? WTERMSIG(status)
              : WIFEXITED(status) && WEXITSTATUS(status) > 128 ? WEXITSTATUS(status) - 128
                                                               : 0;
    return stop_signal_ != 0 && sig > 0 && sig < 64 && sent(sig);
  }

  void reap() {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) note_exit(pid, status);
  }

  void note_exit(pid_t pid, int status) {
    for (Worker& worker : workers_) {
      if (worker.pid != pid || !worker.alive) continue;
      worker.alive = false;
      worker.wait_status = status;
      worker.ended = std::chrono::system_clock::now();
      --alive_;
      bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      if (outcome_.stopped) {
        const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && killed_;
        ++(killed ? outcome_.stopped->killed_after_grace : outcome_.stopped->ended_on_their_own);
        if (failed && ended_by_stop(status)) failed = false;
      }
      // While the ranks of a hung job are looked at (some die of SIGABRT for their stacks), and
      // after, the hang is the job's failure.
      const bool hang = inquiry_.has_value();
      if (failed && !hang && !outcome_.first_failure && !outcome_.start_error &&
          !outcome_.remote_failure) {
        outcome_.first_failure =
            WorkerExit{worker.launch.rank, worker.launch.local_rank, pid, status, worker.ended, {}};
        outcome_.exit_code = exit_code_of(status);
        first_failed_ = static_cast<int>(&worker - workers_.data());
        if (options_.peers != nullptr) {
          // What it wrote before it died goes with the news (its pipe holds all of it now,
          // unless a child of its own still writes there).
          worker.drain_pipes();
          WorkerExit exit = *outcome_.first_failure;
          exit.stderr_tail = worker.err->tail(20);
          tell_peers(job_failure_of(exit, -1, {}));
        }
        begin_teardown();
      }
    }
  }

  RankLog* log_of(int rank) const {
    for (std::size_t i = 0; i < workers_.size() && i < log_files_.size(); ++i) {
      if (workers_[i].launch.rank == rank) return log_files_[i].get();
    }
    return nullptr;
  }

  bool watching_for_hang() const {
    if (!hang_watch_.on() || tearing_down_ || inquiry_) return false;
    // Node 0 declares the job hung: it goes on watching once its own workers are done, as
    // another node's may be stuck (a rank that took another branch at the end).
    return alive_ > 0 || (told_success_ && waiting_for_peers() && options_.peers->member() == 0);
  }

  // --hang-timeout: once no rank showed progress for that long, every rank is looked at
  // (hang_inquiry.hpp), then the job stops as a failure with the verdict.
  void watch_for_hang() {
    if (inquiry_ && !outcome_.hang) return finish_hang_inquiry();
    // /proc and the log files are read at check times only, not at every wake-up of the relay.
    if (!watching_for_hang() || !hang_watch_.due(Clock::now())) return;
    std::vector<pid_t> pids;
    for (Worker& w : workers_) {
      pids.push_back(w.alive ? rank_process(w.pid) : 0);
      // Its stdout goes straight into its log file, unread by the console: growth is output.
      const std::size_t i = static_cast<std::size_t>(&w - workers_.data());
      if (!w.out && !w.out_tail && i < log_files_.size() && log_files_[i]) {
        const off_t size = log_files_[i]->size();
        if (size != w.log_size_seen) hang_watch_.output_from(i);
        w.log_size_seen = size;
      }
    }
    const std::optional<bool> quiet = hang_watch_.quiet(Clock::now(), pids);
    if (!quiet) return;  // not a check time
    // Hung only when no rank anywhere progressed: on several nodes, when every node is quiet.
    const bool hung = options_.peers != nullptr ? options_.peers->job_quiet(*quiet) : *quiet;
    if (!hung) return;
    std::vector<HangInquiry::Target> targets;
    const double interval = std::chrono::duration<double>(hang_watch_.interval()).count();
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      const Worker& w = workers_[i];
      if (!w.alive) continue;
      targets.push_back({i, w.launch.rank, w.launch.local_rank, options_.node_rank, w.pid,
                         hang_watch_.step(i), hang_watch_.cpu_seconds_last_interval(i), interval});
    }
    inquiry_.emplace(std::move(targets), options_.hang_timeout_seconds,
                     options_.flight_recorder_pipe_prefix, options_.flight_recorder_dump_prefix);
    if (options_.peers != nullptr && !peers_stopped_) options_.peers->all_looked();
    inquiry_->restart_faulthandler_clock();
    for (const HangInquiry::Abort& a : inquiry_->faulthandler_aborts()) {
      kill(a.pid, SIGCONT);  // a tool that ran out of time may have left it stopped
      workers_[a.worker].err->capture(256 * 1024);
      kill(a.pid, SIGABRT);  // faulthandler writes every thread's stack, then it dies
    }
    finish_hang_inquiry();
  }

  void finish_hang_inquiry() {
    bool waiting = false;
    for (const HangInquiry::Abort& a : inquiry_->faulthandler_aborts()) {
      const Worker& w = workers_[a.worker];
      waiting = waiting || w.alive || w.err->is_open();
    }
    if (waiting && Clock::now() < inquiry_->deadline()) return;
    for (const HangInquiry::Abort& a : inquiry_->faulthandler_aborts()) {
      workers_[a.worker].err->drain();
      inquiry_->faulthandler_text(a.worker, workers_[a.worker].err->captured());
    }
    HangReport report = inquiry_->report();
    if (options_.peers != nullptr && !peers_stopped_) {
      // Every node's ranks, the same verdict on every node.
      report.places = options_.peers->pool_places(report.places);
      report.verdict = hang_verdict(report.places);
      tell_peers(hang_failure(report));  // a node whose workers had finished hears it so
    }
    keep_full_stacks(
        report, [this](int rank) { return log_of(rank); }, options_.hang_dir);
    outcome_.hang = std::move(report);
    outcome_.exit_code = kHangExitCode;
    begin_teardown();
  }

  void begin_teardown() {
    if (tearing_down_) return;
    tearing_down_ = true;
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(options_.term_timeout_seconds));
    signal_workers(SIGCONT);  // a stopped worker could not act on SIGTERM
    signal_workers(SIGTERM);
  }

  void signal_workers(int sig) {
    if (sig > 0 && sig < 64) sent_signals_ |= 1ull << sig;
    for (const Worker& worker : workers_) {
      if (worker.alive) killpg(worker.pid, sig);
    }
  }

  // Every worker has exited: whatever they left (background children, daemons, even those
  // that left the workers' process groups) is killed and reaped, so that nothing outlives the
  // round and their pipes reach end of file.
  void sweep() {
    kill_all_descendants([this](pid_t pid, int status) { note_exit(pid, status); });
    if (!swept_) {
      swept_ = true;
      drain_deadline_ = Clock::now() + kDrainGrace;
      // Nothing of ours writes to the log files any more.
      for (Worker& w : workers_) {
        if (w.out_tail) w.out_tail->read_to_end_and_close();
      }
    }
    if (first_failed_ >= 0 && outcome_.first_failure) {
      outcome_.first_failure->stderr_tail = workers_[first_failed_].err->tail(20);
    }
  }

  const RunOptions& options_;
  const sigset_t& original_mask_;
  int signal_fd_;
  const std::vector<std::unique_ptr<RankLog>>& log_files_;
  Consoles& consoles_;
  bool relays_paused_ = false;
  bool console_watched_[2] = {false, false};  // stdout, stderr: watched for room
  UniqueFd epoll_;
  UniqueFd log_writes_;  // inotify
  bool log_writes_tried_ = false;
  std::vector<Worker> workers_;
  int first_failed_ = -1;  // index into workers_
  int alive_ = 0;
  int shown_workers_ = 0;  // workers of the round whose lines the console shows
  bool tearing_down_ = false;
  bool killed_ = false;
  bool stop_requested_ = false;
  int stop_signals_ = 0;            // INT, TERM and HUP this launcher got
  int stop_signal_ = 0;             // the one that stopped the job (here or on another node)
  std::uint64_t sent_signals_ = 0;  // bit N: the workers were sent signal N
  DuplicateSignals duplicates_;
  bool swept_ = false;
  HangWatch hang_watch_;
  std::optional<HangInquiry> inquiry_;
  bool peers_stopped_ = false;  // the link said its last word (a failure, or complete)
  bool told_success_ = false;
  Clock::time_point deadline_;
  Clock::time_point drain_deadline_;
  RunOutcome outcome_;
};

}  // namespace

RunOutcome run_workers(const LaunchFactory& launches, const RunOptions& options,
                       const RestartNotice& on_restart) {
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
    sigaddset(&handled, sig);
  sigaddset(&handled, guardian_lost_signal());
  // Blocked and read from a signalfd in the event loop: no handler runs in the middle of
  // anything, and the workers get the original mask back.
  sigset_t original_mask;
  sigprocmask(SIG_BLOCK, &handled, &original_mask);
  UniqueFd signal_fd(signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK));
  // Orphaned grandchildren are re-parented to us, so that we reap them (as PID 1 anyway).
  if (getpid() != 1) prctl(PR_SET_CHILD_SUBREAPER, 1);

  RunOutcome outcome;
  std::vector<std::unique_ptr<RankLog>> log_files;
  Consoles consoles;
  for (int restart = 0;; ++restart) {
    // No worker runs while the round is prepared (in a multi-node job the nodes meet then,
    // which may take long): signals act as usual, so that TERM ends the launcher at once.
    sigprocmask(SIG_SETMASK, &original_mask, nullptr);
    auto made = launches(restart);
    sigprocmask(SIG_BLOCK, &handled, nullptr);
    if (!made) {
      int restarts_so_far = outcome.restarts;
      outcome = RunOutcome{};
      outcome.restarts = restarts_so_far;
      outcome.start_error = made.error();
      outcome.exit_code = 2;
      break;
    }
    std::vector<WorkerLaunch> round_launches = std::move(*made);
    if (!options.output.log_dir.empty() && log_files.empty()) {
      if (!make_directories(options.output.log_dir)) {
        outcome.start_error = system_error("--log-dir", options.output.log_dir);
        outcome.exit_code = 2;
        break;
      }
      for (const WorkerLaunch& launch : round_launches) {
        std::string path = options.output.log_dir + "/" + log_file_name(launch.rank);
        log_files.push_back(RankLog::create(path));
        if (!log_files.back()) {
          outcome.start_error = system_error("log file", path);
          outcome.exit_code = 2;
          break;
        }
      }
      if (outcome.start_error) break;
    }
    Round round(options, original_mask, signal_fd.get(), log_files, consoles);
    int restarts_so_far = outcome.restarts;
    outcome = round.run(std::move(round_launches));
    outcome.restarts = restarts_so_far;
    outcome.stop_requested = round.stop_requested();
    bool failed = outcome.exit_code != 0 && !outcome.start_error;
    if (!failed || outcome.stop_requested || outcome.stopped || restart >= options.max_restarts)
      break;
    if (on_restart) on_restart(outcome, restart + 1);
    outcome.restarts = restart + 1;
  }
  sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  return outcome;
}

}  // namespace aml

#include "supervisor/worker_output.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace aml {
namespace {

constexpr int kPipeBytes = 1 << 20;  // fewer wake-ups for chatty workers
// After the last worker and every leftover process are gone, how long to wait for pipes that
// something outside our reach still holds open.
constexpr auto kDrainGrace = std::chrono::seconds(2);

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

Error pipe_error() {
  return invalid("pipe2", "worker output", std::string("to work (") + std::strerror(errno) + ")");
}

}  // namespace

OutputRelay::OutputRelay(Reactor& reactor, const OutputOptions& options, Clock::duration grace,
                         const std::vector<std::unique_ptr<RankLog>>& log_files, Consoles& consoles,
                         std::function<void(std::size_t)> on_output)
    : reactor_(reactor),
      options_(options),
      grace_(grace),
      log_files_(log_files),
      consoles_(consoles),
      on_output_(std::move(on_output)) {}

int OutputRelay::Output::open_streams() const {
  return (out && out->is_open()) + (out_tail && out_tail->is_open()) + (err && err->is_open());
}

bool OutputRelay::shown(int local_rank) const {
  return !options_.console_local_ranks || options_.console_local_ranks->count(local_rank) > 0;
}

void OutputRelay::count_shown(const std::vector<WorkerLaunch>& launches) {
  shown_workers_ = static_cast<int>(
      std::count_if(launches.begin(), launches.end(),
                    [this](const WorkerLaunch& launch) { return shown(launch.local_rank); }));
}

Result<OutputEnds> OutputRelay::prepare(WorkerLaunch& launch, std::size_t index) {
  outputs_.resize(std::max(outputs_.size(), index + 1));
  Output& o = outputs_[index];
  const bool shown = this->shown(launch.local_rank);
  std::string tag = expand_tag(options_.tag_template, launch.rank, launch.local_rank);
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
  OutputEnds ends;
  // stdout straight into the log file where there is one (and the console, if it shows
  // this rank, can follow the file); else through a pipe.
  if (log != nullptr && (!shown || (log->readable() && log_writes() >= 0))) {
    if (shown) {
      o.pending_tail = std::make_unique<LogTail>(*log, console);  // from the file's end now
      if (!o.pending_tail->watch_with(log_writes())) o.pending_tail.reset();
    }
    if (!shown || o.pending_tail) ends.stdout_file = log->open_for_worker();
    if (!ends.stdout_file) o.pending_tail.reset();
  }
  if (!ends.stdout_file && !stdout_inherited) {
    auto out = make_pipe();
    if (!out) return pipe_error();
    o.out_read = std::move(out->read);
    ends.stdout_pipe = std::move(out->write);
    console.log = log;
    o.out_sinks = console;
  }
  auto err = make_pipe();
  if (!err) return pipe_error();
  o.err_read = std::move(err->read);
  ends.stderr_pipe = std::move(err->write);
  o.err_sinks = StreamSinks{shown ? &consoles_.err : nullptr, tag, log, true};
  if (launch.local_rank != 0) ends.null_input.reset(open("/dev/null", O_RDONLY | O_CLOEXEC));
  return ends;
}

void OutputRelay::attach(std::size_t index) {
  Output& o = outputs_[index];
  if (o.out_read) {
    o.out = std::make_unique<OutputStream>(std::move(o.out_read), o.out_sinks);
    reactor_.add(o.out->fd(), EPOLLIN, [this, index](std::uint32_t) { read_stream(index, true); });
    o.out->watch_with(reactor_.epoll_fd());
  }
  o.out_tail = std::move(o.pending_tail);
  o.err = std::make_unique<OutputStream>(std::move(o.err_read), o.err_sinks);
  reactor_.add(o.err->fd(), EPOLLIN, [this, index](std::uint32_t) { read_stream(index, false); });
  o.err->watch_with(reactor_.epoll_fd());
}

void OutputRelay::read_stream(std::size_t index, bool stdout_stream) {
  Output& o = outputs_[index];
  if ((stdout_stream ? o.out : o.err)->drain() > 0) on_output_(index);  // not an end of file
}

// One inotify instance for the round's log files, made when first needed; -1 if there can
// be none (the per-user limit on instances), and then stdout goes through pipes.
int OutputRelay::log_writes() {
  if (!log_writes_tried_) {
    log_writes_tried_ = true;
    log_writes_.reset(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (log_writes_) {
      reactor_.add(log_writes_.get(), EPOLLIN, [this](std::uint32_t) { take_log_writes(); });
    }
  }
  return log_writes_.get();
}

// Which log files were written to: their tails have something to read.
void OutputRelay::take_log_writes() {
  alignas(inotify_event) char events[4096];
  ssize_t n;
  while ((n = read(log_writes_.get(), events, sizeof(events))) > 0) {
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(events + at);
      for (Output& o : outputs_) {
        // An overflowed queue names no file: every tail looks.
        if (o.out_tail && (event->wd == o.out_tail->watch_descriptor() || event->wd < 0)) {
          o.out_tail->changed();
        }
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
}

void OutputRelay::after_events() {
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    Output& o = outputs_[i];
    // Progress is what the worker wrote: a tail starts pending, and an event may find
    // nothing new or only the launcher's own lines (a rank still importing is starting).
    if (o.out_tail && o.out_tail->pending() && !paused_ && o.out_tail->drain() > 0) {
      on_output_(i);
    }
  }
  pause_while_blocked();
}

void OutputRelay::pause_while_blocked() {
  if (consoles_blocked() && (stopping_ || console_stuck_at_the_end(Clock::now()))) {
    // Stopping, or the job is over and the console took nothing for a grace period: the
    // log files have all of it.
    if (consoles_.out.blocked()) consoles_.out.give_up();
    if (consoles_.err.blocked()) consoles_.err.give_up();
  }
  Console* consoles[2] = {&consoles_.out, &consoles_.err};
  for (int i = 0; i < 2; ++i) {
    if (consoles[i]->blocked() == console_watched_[i]) continue;
    console_watched_[i] = consoles[i]->blocked();
    if (console_watched_[i]) {
      Console* console = consoles[i];
      reactor_.add(console->fd(), EPOLLOUT, [console](std::uint32_t) { console->flush(); });
    } else {
      reactor_.remove(consoles[i]->fd());
    }
  }
  const bool pause = consoles_blocked();
  if (pause == paused_) return;
  paused_ = pause;
  const std::uint32_t events = pause ? 0u : std::uint32_t{EPOLLIN};
  for (Output& o : outputs_) {
    if (o.out && o.out->is_open()) reactor_.change(o.out->fd(), events);
    if (o.err && o.err->is_open()) reactor_.change(o.err->fd(), events);
  }
}

bool OutputRelay::console_stuck_at_the_end(Clock::time_point now) const {
  if (!swept_) return false;
  auto last = std::max(consoles_.out.last_progress(), consoles_.err.last_progress());
  return now >= last + grace_;
}

void OutputRelay::swept() {
  if (swept_) return;
  swept_ = true;
  drain_deadline_ = Clock::now() + kDrainGrace;
  // Nothing of ours writes to the log files any more.
  for (Output& o : outputs_) {
    if (o.out_tail) o.out_tail->read_to_end_and_close();
  }
}

void OutputRelay::tick(Clock::time_point now) {
  if (swept_ && !paused_ && now >= drain_deadline_) {
    for (Output& o : outputs_) {
      if (o.out) o.out->close();
      if (o.err) o.err->close();
    }
  }
}

std::optional<OutputRelay::Clock::time_point> OutputRelay::deadline(Clock::time_point now) const {
  std::optional<Clock::time_point> at;
  if (!paused_) {
    for (const Output& o : outputs_) {
      if (o.out_tail && o.out_tail->pending()) return now;
    }
  }
  if (swept_ && open_streams() > 0 && !paused_) at = earliest(at, drain_deadline_);
  if (swept_ && consoles_blocked()) {
    at = earliest(at,
                  std::max(consoles_.out.last_progress(), consoles_.err.last_progress()) + grace_);
  }
  return at;
}

int OutputRelay::open_streams() const {
  int open = 0;
  for (const Output& o : outputs_) open += o.open_streams();
  return open;
}

void OutputRelay::stop_requested() {
  stopping_ = true;
  // Asked to stop while the console catches up with what the workers wrote: it stops there
  // (the log files hold all of it).
  if (!swept_) return;
  for (Output& o : outputs_) {
    if (o.out_tail) o.out_tail->close_now();
  }
}

void OutputRelay::drain(std::size_t index) {
  Output& o = outputs_[index];
  std::size_t got = 0;
  if (o.out) got += o.out->drain();
  if (o.err) got += o.err->drain();
  if (got > 0) on_output_(index);
}

std::vector<std::string> OutputRelay::stderr_tail(std::size_t index, std::size_t lines) const {
  if (index >= outputs_.size() || !outputs_[index].err) return {};
  return outputs_[index].err->tail(lines);
}

bool OutputRelay::stdout_unread(std::size_t index) const {
  const Output& o = outputs_[index];
  return !o.out && !o.out_tail && index < log_files_.size() && log_files_[index];
}

}  // namespace aml

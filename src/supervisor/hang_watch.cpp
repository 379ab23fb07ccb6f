#include "supervisor/hang_watch.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "supervisor/proc_state.hpp"

#ifndef MFD_CLOEXEC  // glibc before 2.27 (the portable build's) does not name it
#define MFD_CLOEXEC 1U
#endif

namespace aml {

HangWatch::HangWatch(std::chrono::milliseconds timeout, std::chrono::milliseconds startup_timeout)
    : timeout_(timeout),
      startup_timeout_(startup_timeout),
      last_progress_(Clock::now()),
      next_check_(Clock::now() + interval()) {}

HangWatch::~HangWatch() {
  for (Page& p : pages_) {
    if (p.page != nullptr) munmap(p.page, kProgressPageBytes);
  }
}

std::chrono::milliseconds HangWatch::interval() const {
  // Often enough that the verdict comes soon after the timeout, seldom enough to cost nothing.
  return std::clamp(timeout_ / 10, std::chrono::milliseconds(100), std::chrono::milliseconds(1000));
}

int HangWatch::add_worker() {
  Page p;
  // Close-on-exec here; the spawn clears it for the one worker that gets it. The system call
  // itself: the portable build links against glibc 2.17, older than memfd_create().
  p.fd.reset(static_cast<int>(syscall(SYS_memfd_create, "aml-launch-progress", MFD_CLOEXEC)));
  if (p.fd && ftruncate(p.fd.get(), kProgressPageBytes) == 0) {
    void* at = mmap(nullptr, kProgressPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, p.fd.get(), 0);
    if (at != MAP_FAILED) {
      p.page = static_cast<ProgressPage*>(at);
      p.page->step.store(-1, std::memory_order_relaxed);
      p.page->magic.store(kProgressMagic, std::memory_order_release);
    }
  }
  if (p.page == nullptr) p.fd.reset();
  const int fd = p.fd.get();
  p.started = p.last_progress = last_progress_ = Clock::now();  // a new round starts the clock
  pages_.push_back(std::move(p));
  return fd;
}

void HangWatch::output_from(std::size_t index) {
  if (on()) progress_of(index, Clock::now());
}

void HangWatch::progress_of(std::size_t index, Clock::time_point now) {
  last_progress_ = now;
  if (!first_progress_) first_progress_ = now;
  if (index >= pages_.size()) return;
  pages_[index].last_progress = now;
  pages_[index].progressed = true;
}

void HangWatch::read_pages(Clock::time_point now) {
  for (std::size_t i = 0; i < pages_.size(); ++i) {
    Page& p = pages_[i];
    if (p.page == nullptr) continue;
    const std::uint64_t calls = p.page->calls.load(std::memory_order_relaxed);
    if (calls != p.calls_seen) {
      p.calls_seen = calls;
      progress_of(i, now);
    }
  }
}

std::optional<std::size_t> HangWatch::moved_since(Clock::time_point since) const {
  for (std::size_t i = 0; i < pages_.size(); ++i) {
    if (pages_[i].progressed && pages_[i].last_progress > since) return i;
  }
  return std::nullopt;
}

std::optional<bool> HangWatch::quiet(Clock::time_point now, const std::vector<pid_t>& pids) {
  if (!on() || now < next_check_) return std::nullopt;
  next_check_ = now + interval();
  read_pages(now);
  bool starting = false;
  const bool job_going = first_progress_ && last_progress_ - *first_progress_ >= timeout_;
  for (std::size_t i = 0; i < pages_.size(); ++i) {
    Page& p = pages_[i];
    if (i >= pids.size() || pids[i] <= 0) continue;  // ended
    p.cpu_ticks_before = p.cpu_ticks;
    p.cpu_ticks = read_proc_state(pids[i]).cpu_ticks;
    // Imports, a checkpoint's load, the first meeting of the ranks: silent, and no hang yet.
    if (!p.progressed && !job_going && now - p.started < startup_timeout_) starting = true;
  }
  return !starting && now - last_progress_ >= timeout_;
}

int HangWatch::next_check_ms(Clock::time_point now) const {
  if (!on()) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next_check_ - now).count();
  return static_cast<int>(std::max<long long>(0, left + 1));
}

std::int64_t HangWatch::step(std::size_t index) const {
  if (index >= pages_.size() || pages_[index].page == nullptr) return -1;
  return pages_[index].page->step.load(std::memory_order_relaxed);
}

double HangWatch::cpu_seconds_last_interval(std::size_t index) const {
  if (index >= pages_.size()) return 0;
  const Page& p = pages_[index];
  if (p.cpu_ticks < 0 || p.cpu_ticks_before < 0) return 0;
  return ticks_to_seconds(p.cpu_ticks - p.cpu_ticks_before);
}

}  // namespace aml

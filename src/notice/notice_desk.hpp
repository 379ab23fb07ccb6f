// This node's notices of the job's end (issue 55), from wherever they come: the platform's
// metadata service (metadata_watch.hpp) or a signal to the launcher (--notice-signal). The desk
// hears each once, writes it where the workers read it (AML_LAUNCH_NOTICE_FILE, replaced whole) and
// hands it to the round, which tells the workers and the verdict. It lives as long as the launch:
// rounds come and go, what was heard stays.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "notice/metadata_watch.hpp"
#include "notice/notice.hpp"

namespace aml {

// The exit status of a job that ended for a notice (its workers finished after it, or were
// stopped at its deadline). In the range Kubeflow's restartPolicy ExitCode retries (128-255),
// above every 128+N of a death by signal N (N <= 64) and the codes programs give themselves, so
// that it means this alone: a scheduler can be told to retry it
// (docs/guides/spot-and-maintenance.md).
inline constexpr int kPreemptedExitCode = 200;

struct NoticeSettings {
  std::optional<MetadataWatchOptions> metadata;  // nullopt: no platform asked
  int launcher_signal = 0;                       // --notice-signal (0: none)
  int to_workers = 10;                           // --notice-to-workers (SIGUSR1; 0: none)
  std::string file;                              // AML_LAUNCH_NOTICE_FILE ("": none)
  int node_rank = 0;
  std::string host;
};

class NoticeDesk {
 public:
  using Clock = std::chrono::steady_clock;
  NoticeDesk(NoticeSettings settings, std::function<void(const std::string&)> say);

  const NoticeSettings& settings() const { return settings_; }
  // The metadata watch's descriptor (-1: none), its turns and its time.
  int fd() const { return watch_ ? watch_->fd() : -1; }
  void on_ready(Clock::time_point now);
  void tick(Clock::time_point now);
  std::optional<Clock::time_point> next_deadline() const;

  // --notice-signal came to this launcher.
  void signal_came(int sig);
  // Another node's notice, passed on by the rendezvous (this node's own, heard back, is
  // not heard again).
  void heard_elsewhere(Notice notice);
  // The notices heard since the last call, in order, each already in the file; `here`: this
  // node heard it itself, and the other nodes are still to be told.
  struct Heard {
    Notice notice;
    bool here = true;
  };
  std::vector<Heard> take_new();
  // The first notice that ends the job (all but a freeze).
  const std::optional<Notice>& ending() const { return ending_; }

 private:
  void hear(Notice notice, bool here);
  void write_file(const Notice& notice);  // replaced whole: a reader sees all of it or none

  NoticeSettings settings_;
  std::function<void(const std::string&)> say_;
  std::unique_ptr<MetadataWatch> watch_;
  std::vector<std::string> heard_keys_;
  std::vector<Heard> new_;
  std::optional<Notice> ending_;
};

}  // namespace aml

// The job's events (DESIGN §6b; docs/guides/observability.md has the schema): a stream that its
// observers follow (event_observer.hpp), and where asked for, a file of JSON lines
// (events/event_sink.hpp: appended, rotated, a failed write said once). One schema on every
// node; each event written as it happens, the lines of one moment (a burst) in one write(2), so
// that a crash loses at most what is being written. The job's node 0 may write the same lines
// to a second file, the job's (--job-events-file): what it sees of every node.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aml/error.hpp"
#include "events/event_observer.hpp"
#include "events/event_sink.hpp"

namespace aml {

// Who writes: the same on every line of one launcher's file.
struct EventSource {
  int node_rank = 0;
  std::string host;
  std::string run_id;
};

class EventLog {
 public:
  static constexpr std::uint64_t kRotateBytes = 64ull << 20;
  static constexpr std::size_t kBacklogBytes = 4u << 20;

  // Opens (or creates) `path` for appending; its folder is made where missing.
  static Result<std::unique_ptr<EventLog>> open(std::string path, EventSource source,
                                                std::uint64_t rotate_bytes = kRotateBytes);
  // The stream alone: its observers follow it, no file is written.
  static std::unique_ptr<EventLog> without_file(EventSource source);

  // Follows every event from now on; it must outlive this log (or be removed first).
  void add_observer(EventObserver* observer) { observers_.push_back(observer); }
  void remove_observer(EventObserver* observer);
  bool has_file() const { return own_ != nullptr; }

  // --job-events-file: the lines go there too while this launcher is the job's node 0
  // (write_job_file(true)); the file is opened the first time, here at once with `now` (an
  // error then is the caller's to say; later, it is said and the file left out). The lines
  // written before it first opens (an elastic launcher learns it is node 0 when its first round
  // forms) are kept, up to kBacklogBytes, and go there first: the job's file and node 0's own
  // hold the same lines from its first.
  std::optional<Error> keep_job_file(std::string path, bool now);
  void write_job_file(bool on);
  bool writes_job_file() const { return job_on_; }

  // The round the next events belong to (the restart count), and an elastic node's rank in it.
  void set_round(int round) { round_ = round; }
  void set_node_rank(int node_rank) { source_.node_rank = node_rank; }

  // One event of `kind` (the guide lists them), about `rank` (-1: no rank), with its details.
  void write(std::string_view kind,
             nlohmann::ordered_json details = nlohmann::ordered_json::object(), int rank = -1);

  // The lines of one moment (a round's spawns, the exits one wake-up reaps) go out together,
  // in one write at the burst's end; a null log: nothing to do.
  class Burst {
   public:
    explicit Burst(EventLog* log) : log_(log) {
      if (log_ != nullptr) ++log_->bursts_;
    }
    ~Burst() {
      if (log_ != nullptr && --log_->bursts_ == 0) log_->flush();
    }
    Burst(const Burst&) = delete;
    Burst& operator=(const Burst&) = delete;

   private:
    EventLog* log_;
  };

 private:
  EventLog(std::unique_ptr<EventSink> own, EventSource source, std::uint64_t rotate_bytes);
  bool writing() const;
  void flush();  // what a burst held, written to each file

  // "2026-11-29T04:06:20.": the time's part up to its milliseconds, made again each second.
  const std::string& time_prefix(long long seconds);

  std::unique_ptr<EventSink> own_;  // --events-file; null: none
  std::unique_ptr<EventSink> job_;  // --job-events-file, once opened
  std::string job_path_;            // "": none asked for
  bool job_on_ = false;
  bool job_ever_on_ = false;  // the backlog went out, or is no more kept
  bool job_open_failed_ = false;
  std::string backlog_;  // this launcher's lines before the job's file first opened
  EventSource source_;
  std::uint64_t rotate_bytes_;
  std::string host_json_;  // the source's strings, quoted once
  std::string run_id_json_;
  long long prefix_second_ = -1;
  std::string prefix_;
  int round_ = 0;
  int bursts_ = 0;  // open bursts: lines wait in pending_
  std::string pending_;
  std::vector<EventObserver*> observers_;
};

}  // namespace aml

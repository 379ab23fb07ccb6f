#include "events/event_log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace aml {

Result<std::unique_ptr<EventLog>> EventLog::open(std::string path, EventSource source,
                                                 std::uint64_t rotate_bytes) {
  auto file = EventSink::open(std::move(path), "--events-file", rotate_bytes);
  if (!file) return file.error();
  return std::unique_ptr<EventLog>(new EventLog(std::move(*file), std::move(source), rotate_bytes));
}

std::unique_ptr<EventLog> EventLog::without_file(EventSource source) {
  return std::unique_ptr<EventLog>(new EventLog(nullptr, std::move(source), kRotateBytes));
}

void EventLog::remove_observer(EventObserver* observer) { std::erase(observers_, observer); }

EventLog::EventLog(std::unique_ptr<EventSink> own, EventSource source, std::uint64_t rotate_bytes)
    : own_(std::move(own)),
      source_(std::move(source)),
      rotate_bytes_(rotate_bytes),
      host_json_(nlohmann::json(source_.host).dump()),
      run_id_json_(nlohmann::json(source_.run_id).dump()) {}

std::optional<Error> EventLog::keep_job_file(std::string path, bool now) {
  job_path_ = std::move(path);
  if (!now) return std::nullopt;
  auto file = EventSink::open(job_path_, "--job-events-file", rotate_bytes_);
  if (!file) return file.error();
  job_ = std::move(*file);
  job_on_ = true;
  job_ever_on_ = true;
  return std::nullopt;
}

void EventLog::write_job_file(bool on) {
  if (job_path_.empty()) return;
  if (on && !job_ && !job_open_failed_) {
    auto file = EventSink::open(job_path_, "--job-events-file", rotate_bytes_);
    if (!file) {
      job_open_failed_ = true;   // said once; the job goes on
      backlog_ = std::string();  // nowhere to go
      std::cerr << "aml-launch: " << file.error().message()
                << "; the job's events are not written there (the job goes on)\n";
    } else {
      job_ = std::move(*file);
    }
  }
  job_on_ = on && job_ != nullptr;
  if (job_on_ && !job_ever_on_) {
    job_ever_on_ = true;
    if (!backlog_.empty()) job_->append(backlog_);
    backlog_ = std::string();
  }
}

bool EventLog::writing() const {
  const bool backlogged = !job_path_.empty() && !job_ever_on_ && !job_open_failed_;
  return (own_ && !own_->failed()) || (job_on_ && !job_->failed()) || backlogged;
}

const std::string& EventLog::time_prefix(long long seconds) {
  if (seconds != prefix_second_) {
    const std::time_t whole = static_cast<std::time_t>(seconds);
    std::tm utc{};
    gmtime_r(&whole, &utc);
    char text[32];
    const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S.", &utc);
    prefix_.assign(text, n);
    prefix_second_ = seconds;
  }
  return prefix_;
}

void EventLog::write(std::string_view kind, nlohmann::ordered_json details, int rank) {
  if (!observers_.empty()) {
    const Event event{kind,   details,           rank,
                      round_, source_.node_rank, std::chrono::steady_clock::now()};
    for (EventObserver* observer : observers_) observer->on_event(event);
  }
  if (!writing()) return;
  // The line made by hand around the details (the events' keys in their order): a launch of
  // many workers writes a line a start and an exit.
  const long long millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, "%03lldZ", millis % 1000);
  const std::string text =
      "{\"time\":\"" + time_prefix(millis / 1000) + fraction +
      "\",\"kind\":" + nlohmann::json(kind).dump() +
      ",\"node_rank\":" + std::to_string(source_.node_rank) + ",\"host\":" + host_json_ +
      ",\"run_id\":" + run_id_json_ + ",\"round\":" + std::to_string(round_) +
      ",\"rank\":" + (rank >= 0 ? std::to_string(rank) : "null") + ",\"details\":" +
      details.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "}\n";
  pending_ += text;
  if (bursts_ == 0) flush();
}

void EventLog::flush() {
  if (pending_.empty()) return;
  if (own_) own_->append(pending_);
  if (job_on_) {
    job_->append(pending_);
  } else if (!job_path_.empty() && !job_ever_on_ && !job_open_failed_) {
    if (backlog_.size() + pending_.size() <= kBacklogBytes) {
      backlog_ += pending_;
    } else {  // a launcher seated as node 0 only after a long while: its file begins then
      job_ever_on_ = true;
      backlog_ = std::string();
    }
  }
  pending_.clear();
}

}  // namespace aml

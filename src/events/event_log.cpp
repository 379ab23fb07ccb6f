#include "events/event_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>

#include "util/make_directories.hpp"
#include "util/write_all.hpp"

namespace aml {
namespace {

UniqueFd open_for_append(const std::string& path, int extra_flags = 0) {
  return UniqueFd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | extra_flags, 0644));
}

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "" : path.substr(0, slash);
}

}  // namespace

Result<std::unique_ptr<EventLog>> EventLog::open(std::string path, EventSource source,
                                                 std::uint64_t rotate_bytes) {
  const std::string folder = folder_of(path);
  if (!folder.empty() && !make_directories(folder)) {
    return invalid("--events-file", path,
                   "a file whose folder can be made (" + std::string(std::strerror(errno)) + ")");
  }
  UniqueFd fd = open_for_append(path);
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0) {
    return invalid("--events-file", path,
                   "a file this launcher can write (" + std::string(std::strerror(errno)) + ")");
  }
  return std::unique_ptr<EventLog>(new EventLog(std::move(path), std::move(fd),
                                                static_cast<std::uint64_t>(st.st_size),
                                                std::move(source), rotate_bytes));
}

std::unique_ptr<EventLog> EventLog::without_file(EventSource source) {
  return std::unique_ptr<EventLog>(new EventLog("", UniqueFd(), 0, std::move(source), 0));
}

void EventLog::remove_observer(EventObserver* observer) { std::erase(observers_, observer); }

EventLog::EventLog(std::string path, UniqueFd fd, std::uint64_t size, EventSource source,
                   std::uint64_t rotate_bytes)
    : path_(std::move(path)),
      fd_(std::move(fd)),
      size_(size),
      source_(std::move(source)),
      rotate_bytes_(rotate_bytes),
      host_json_(nlohmann::json(source_.host).dump()),
      run_id_json_(nlohmann::json(source_.run_id).dump()) {}

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

bool EventLog::rotate() {
  // FILE.1 keeps the part before; a reader following FILE by name sees it start again.
  if (rename(path_.c_str(), (path_ + ".1").c_str()) != 0) return false;
  UniqueFd fresh = open_for_append(path_, O_TRUNC);
  if (!fresh) return false;
  fd_ = std::move(fresh);
  size_ = 0;
  return true;
}

void EventLog::write(std::string_view kind, nlohmann::ordered_json details, int rank) {
  if (!observers_.empty()) {
    const Event event{kind,   details,           rank,
                      round_, source_.node_rank, std::chrono::steady_clock::now()};
    for (EventObserver* observer : observers_) observer->on_event(event);
  }
  if (failed_ || !fd_) return;
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
  if (failed_ || pending_.empty()) return;
  if (size_ > 0 && size_ + pending_.size() > rotate_bytes_ && !rotate()) {
    failed_ = true;
  } else if (write_all(fd_.get(), pending_)) {
    size_ += pending_.size();
    pending_.clear();
    return;
  }
  failed_ = true;
  pending_.clear();
  std::cerr << "aml-launch: cannot write --events-file " << path_ << ": " << std::strerror(errno)
            << "; no more events are written there (the job goes on)\n";
}

}  // namespace aml

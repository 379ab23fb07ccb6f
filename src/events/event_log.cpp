#include "events/event_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "supervisor/failure_summary.hpp"
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

EventLog::EventLog(std::string path, UniqueFd fd, std::uint64_t size, EventSource source,
                   std::uint64_t rotate_bytes)
    : path_(std::move(path)),
      fd_(std::move(fd)),
      size_(size),
      source_(std::move(source)),
      rotate_bytes_(rotate_bytes) {}

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
  if (failed_) return;
  nlohmann::ordered_json line;
  line["time"] = utc_timestamp(std::chrono::system_clock::now());
  line["kind"] = kind;
  line["node_rank"] = source_.node_rank;
  line["host"] = source_.host;
  line["run_id"] = source_.run_id;
  line["round"] = round_;
  line["rank"] = rank >= 0 ? nlohmann::ordered_json(rank) : nlohmann::ordered_json(nullptr);
  line["details"] = std::move(details);
  std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  text += '\n';
  if (size_ > 0 && size_ + text.size() > rotate_bytes_ && !rotate()) {
    failed_ = true;
  } else if (write_all(fd_.get(), text)) {
    size_ += text.size();
    return;
  }
  failed_ = true;
  std::cerr << "aml-launch: cannot write --events-file " << path_ << ": " << std::strerror(errno)
            << "; no more events are written there (the job goes on)\n";
}

}  // namespace aml

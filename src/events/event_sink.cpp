#include "events/event_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

Result<std::unique_ptr<EventSink>> EventSink::open(std::string path, std::string flag,
                                                   std::uint64_t rotate_bytes) {
  const std::string folder = folder_of(path);
  if (!folder.empty() && !make_directories(folder)) {
    return invalid(flag, path,
                   "a file whose folder can be made (" + std::string(std::strerror(errno)) + ")");
  }
  UniqueFd fd = open_for_append(path);
  struct stat st {};
  if (!fd || fstat(fd.get(), &st) != 0) {
    return invalid(flag, path,
                   "a file this launcher can write (" + std::string(std::strerror(errno)) + ")");
  }
  return std::unique_ptr<EventSink>(new EventSink(std::move(path), std::move(flag), std::move(fd),
                                                  static_cast<std::uint64_t>(st.st_size),
                                                  rotate_bytes));
}

EventSink::EventSink(std::string path, std::string flag, UniqueFd fd, std::uint64_t size,
                     std::uint64_t rotate_bytes)
    : path_(std::move(path)),
      flag_(std::move(flag)),
      fd_(std::move(fd)),
      size_(size),
      rotate_bytes_(rotate_bytes) {}

bool EventSink::rotate() {
  // FILE.1 keeps the part before; a reader following FILE by name sees it start again.
  if (rename(path_.c_str(), (path_ + ".1").c_str()) != 0) return false;
  UniqueFd fresh = open_for_append(path_, O_TRUNC);
  if (!fresh) return false;
  fd_ = std::move(fresh);
  size_ = 0;
  return true;
}

void EventSink::append(std::string_view lines) {
  if (failed_ || lines.empty()) return;
  if (!(size_ > 0 && size_ + lines.size() > rotate_bytes_ && !rotate()) &&
      write_all(fd_.get(), lines)) {
    size_ += lines.size();
    return;
  }
  failed_ = true;
  std::cerr << "aml-launch: cannot write " << flag_ << " " << path_ << ": " << std::strerror(errno)
            << "; no more events are written there (the job goes on)\n";
}

}  // namespace aml

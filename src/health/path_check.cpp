// A path the user names (--health-path): there, writable (a file made and removed), and with
// free space above the bound (a full scratch disk fails the step that writes, late).
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "health/health_checks.hpp"

namespace aml {
namespace {

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

}  // namespace

HealthResult check_path(const HealthSettings& settings, const std::string& path) {
  HealthResult result{"path " + path, false, "", 0};
  struct statvfs space {};
  if (statvfs(path.c_str(), &space) != 0) {
    result.figure = std::string("cannot be looked at: ") + std::strerror(errno);
    return result;
  }
  const std::string probe = path + "/.aml-launch-health." + std::to_string(getpid());
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    result.figure = std::string("not writable: ") + std::strerror(errno);
    return result;
  }
  const bool wrote = write(fd, "x", 1) == 1;
  const int write_errno = errno;
  close(fd);
  unlink(probe.c_str());
  if (!wrote) {
    result.figure = std::string("a write fails: ") + std::strerror(write_errno);
    return result;
  }
  const std::uint64_t free_bytes =
      static_cast<std::uint64_t>(space.f_bavail) * static_cast<std::uint64_t>(space.f_frsize);
  result.figure = "writable, " + gib(free_bytes) + " free";
  if (free_bytes < settings.min_free_bytes) {
    result.figure += " (below " + gib(settings.min_free_bytes) + ")";
    return result;
  }
  result.ok = true;
  return result;
}

}  // namespace aml

// A path the user names (--health-path): there, writable (a file made and removed), and with
// free space above the bound (a full scratch disk fails the step that writes, late).
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

// Why no file can be made in PATH, where open() names an errno that misleads: /proc answers
// "No such file or directory" for a folder that is there.
std::string why_not_writable(const std::string& path, int open_errno, const struct statvfs& space) {
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && !S_ISDIR(info.st_mode))
    return "not a folder (the health check writes a file in it)";
  if (space.f_flag & ST_RDONLY) return "its file system is mounted read-only";
  struct statfs kind {};
  if (statfs(path.c_str(), &kind) == 0) {
    switch (kind.f_type) {
      case PROC_SUPER_MAGIC:
        return "it is on /proc, the kernel's process file system, where no file can be made";
      case SYSFS_MAGIC:
        return "it is on /sys, the kernel's sysfs, where no file can be made";
      case CGROUP_SUPER_MAGIC:
      case CGROUP2_SUPER_MAGIC:
        return "it is on a cgroup file system, where no file can be made";
      default:
        break;
    }
  }
  return std::strerror(open_errno);
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
    result.figure = "not writable: " + why_not_writable(path, errno, space);
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

#include "placement/sys_reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace aml {
namespace {

// "/a/b/../c/./d" as "/a/c/d".
std::string normal(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    const std::string part = path.substr(start, slash - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = slash + 1;
  }
  std::string out;
  for (const std::string& part : parts) out += "/" + part;
  return out;
}

}  // namespace

std::optional<std::string> SysReader::text(const std::string& path) const {
  const int fd = ::open(at(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buffer[4096];
  ssize_t n;
  // A sysfs attribute comes in one read; only a full buffer asks for more.
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) {
    out.append(buffer, static_cast<std::size_t>(n));
    if (static_cast<std::size_t>(n) < sizeof(buffer)) break;
  }
  ::close(fd);
  if (n < 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::optional<CpuList> SysReader::list(const std::string& path) const {
  auto t = text(path);
  return t ? parse_cpu_list(*t) : std::nullopt;
}

int SysReader::number(const std::string& path, int otherwise) const {
  auto t = text(path);
  if (!t || t->empty()) return otherwise;
  char* end = nullptr;
  const long value = std::strtol(t->c_str(), &end, 0);
  return end != t->c_str() && *end == '\0' ? static_cast<int>(value) : otherwise;
}

std::vector<std::string> SysReader::entries(const std::string& path) const {
  std::vector<std::string> names;
  DIR* dir = ::opendir(at(path).c_str());
  if (dir == nullptr) return names;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::string SysReader::resolved(const std::string& path) const {
  char buffer[PATH_MAX];
  const ssize_t n = ::readlink(at(path).c_str(), buffer, sizeof(buffer) - 1);
  if (n <= 0) return path;
  const std::string target(buffer, static_cast<std::size_t>(n));
  if (target.starts_with('/')) return normal(target);
  return normal(path.substr(0, path.rfind('/') + 1) + target);
}

}  // namespace aml

#include "util/replace_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "util/unique_fd.hpp"
#include "util/write_all.hpp"

namespace aml {
namespace {

bool write_to(const std::string& path, std::string_view content, int flags) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0666));
  return fd && write_all(fd.get(), content);
}

}  // namespace

bool replace_file(const std::string& path, std::string_view content) {
  std::string target = path;
  struct stat info {};
  if (stat(path.c_str(), &info) == 0) {
    // A terminal, a pipe, /dev/stderr: written as they are.
    if (!S_ISREG(info.st_mode)) return write_to(path, content, O_TRUNC);
    // Through a symbolic link, the file it names is replaced (not the link).
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved) != nullptr) target = resolved;
  }
  const std::string temporary = target + ".tmp-" + std::to_string(getpid());
  if (write_to(temporary, content, O_TRUNC | O_EXCL) &&
      std::rename(temporary.c_str(), target.c_str()) == 0) {
    return true;
  }
  int why = errno;
  unlink(temporary.c_str());
  if (why == ENOENT) {  // no such directory: in place cannot work either
    errno = why;
    return false;
  }
  return write_to(target, content, O_TRUNC);
}

}  // namespace aml

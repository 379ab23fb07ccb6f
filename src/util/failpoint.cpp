#include "util/failpoint.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace aml {

void failpoint(std::string_view name) {
  static const char* const asked = std::getenv("AML_LAUNCH_TEST_FAILPOINT");
  if (asked == nullptr) return;
  const std::string_view spec(asked);
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos || spec.substr(0, colon) != name) return;
  std::string_view rest = spec.substr(colon + 1);
  constexpr std::string_view kStop = ":stop", kSegv = ":segv";
  const bool stop = rest.size() > kStop.size() && rest.ends_with(kStop);
  const bool segv = rest.size() > kSegv.size() && rest.ends_with(kSegv);
  if (stop || segv) rest.remove_suffix(stop ? kStop.size() : kSegv.size());
  // Once for every launcher that shares the file's folder: the first to create it.
  const std::string once(rest);
  const int fd = open(once.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return;
  close(fd);
  if (segv) {
    // A real bad access (not a raised signal), at an address the compiler cannot see.
    volatile std::uintptr_t nowhere = 8;
    *reinterpret_cast<volatile int*>(nowhere) = 0;
  }
  raise(stop ? SIGSTOP : SIGKILL);
}

}  // namespace aml

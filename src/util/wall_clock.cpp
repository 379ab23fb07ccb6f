#include "util/wall_clock.hpp"

#include <time.h>

#include <cstdlib>

namespace aml {

std::int64_t wall_clock_ns() {
  static const std::int64_t skew = [] {
    const char* text = std::getenv("AML_LAUNCH_TEST_CLOCK_SKEW_NS");
    return text != nullptr ? std::strtoll(text, nullptr, 10) : 0;
  }();
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec + skew;
}

}  // namespace aml

// The wall clock (CLOCK_REALTIME) in nanoseconds since the epoch: the clock torch's flight
// recorder stamps its calls with, and the one the launchers compare (--straggler-check).
#pragma once

#include <cstdint>

namespace aml {

// AML_LAUNCH_TEST_CLOCK_SKEW_NS=N adds N to this launcher's reading, read once: a test's node
// whose clock is off (network namespaces share the host's; its ranks' dumps are shifted by the
// test). Unset, as in every real job, it adds nothing. The store answers its host's clock as is.
std::int64_t wall_clock_ns();

}  // namespace aml

// A job topology seen from one process, for the rank library.
#pragma once

#include <aml/rank.hpp>

namespace aml {

// Per-process: the scheduler's rank. Node-level seen without a launcher: this process is the
// only one on its node (local rank 0 of 1), so its rank is its node rank.
ProcessTopology process_view(const Topology& job);

}  // namespace aml

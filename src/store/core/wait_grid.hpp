// When the store answers a long wait's timeout (store_core_waits.cpp), for the clients that
// count on it (the node group's liveness, rendezvous/group_timing.hpp).
#pragma once

#include <chrono>

namespace aml::store {

// A long wait's timeout ends on a grid that every such wait shares: the launchers' watches
// that time out within one step are answered in one wake-up of the store, not one each (4,096
// followers asking again every 20 s were 200 wake-ups a second). Such a wait ends at most one
// step late; a shorter one, whose timing a caller may count on, ends on time.
inline constexpr std::chrono::milliseconds kWaitGrid{250};
inline constexpr std::chrono::milliseconds kWaitGridFrom{4000};

}  // namespace aml::store

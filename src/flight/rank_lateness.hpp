// The straggler check's measure (DESIGN §6): at each collective that every rank of its group
// had enqueued and completed by a sample's moment, a rank's lateness is when it enqueued it
// against the earliest rank of the group, on the job's clock (each node's ranks' times shifted
// by that node's offset to it). A rank's lateness in a sample is its mean over those calls,
// weighed against the step's period: the gap between two calls of the same op and sizes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "flight/collective_digest.hpp"

namespace aml {

struct RankCalls {
  int rank = -1;
  int node = 0;
  std::vector<GroupDigest> groups;  // their ids, descriptions and recent calls
};

// The crossing form of one node's ranks, times shifted by `offset_ns` to the job's clock (a few
// bytes a call), and back; what is not as written is left out.
nlohmann::json rank_calls_json(const std::vector<RankCalls>& ranks, std::int64_t offset_ns);
std::vector<RankCalls> rank_calls_from_json(const nlohmann::json& j);

struct LatenessSample {
  struct Rank {
    int rank = -1;
    int node = 0;
    double seconds = 0;  // its mean lateness
    int calls = 0;       // the calls it was measured at
  };
  std::vector<Rank> ranks;  // every rank measured, by rank
  int compared = 0;         // calls compared, every group's
  double step_seconds = 0;  // the step's period (0: not found)
  int last = -1;            // the index in `ranks` of the latest on average (-1: none)
  // The last rank's lateness as a share of the step (0 where either is unknown).
  double share() const;
};

LatenessSample measure_lateness(const std::vector<RankCalls>& ranks);

}  // namespace aml

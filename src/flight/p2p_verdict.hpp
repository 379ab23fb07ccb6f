// Point-to-point calls at a hang (DESIGN §6): each rank's oldest open send or recv of a group
// (collective_digest.hpp) paired with its peer's. Two ranks that each wait to send to the other
// (or to receive), a rank waiting on a peer that never posted the matching call, and a matched
// pair that never completed. Group ranks are turned into the job's ranks by what each rank says
// of itself; in the default group they are the same.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "flight/collective_digest.hpp"

namespace aml {

struct P2PFinding {
  std::string text;
  std::vector<int> named;
  nlohmann::ordered_json json;
};

// One group's members (their ranks, and their digest of it: null where they have none).
std::vector<P2PFinding> compare_p2p(const std::vector<std::pair<int, const GroupDigest*>>& members);

}  // namespace aml

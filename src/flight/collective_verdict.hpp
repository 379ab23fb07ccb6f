// Naming a hang at its collective (DESIGN §6): every rank's flight recorder digest compared,
// group by group. The ranks behind ("rank 5 never entered all_reduce #1043 of default_pg; the
// 15 others have waited in it since ..."), a mismatch at one sequence number ("rank 1 called
// broadcast (#7 of default_pg) where the others called all_reduce"), a collective entered by
// all and completed by none, and the ranks whose dump never came or could not be read. The
// same digests give the same verdict on every node.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flight/collective_digest.hpp"

namespace aml {

struct RankCollectiveDigest {
  int rank = -1;
  int node_rank = 0;
  const RankCollectives* collectives = nullptr;
};

struct CollectiveVerdict {
  std::string line;             // "" where no rank's recorder was asked (nothing to say)
  std::vector<int> named;       // the ranks the line names as the cause
  nlohmann::ordered_json json;  // the summary's and the hang event's "collective" object
};

CollectiveVerdict collective_verdict(std::vector<RankCollectiveDigest> ranks);

}  // namespace aml

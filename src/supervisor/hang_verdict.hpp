// Naming the odd one out of a hung job (DESIGN §6): every rank's place (the innermost frame of
// its main thread, else where the kernel has it waiting), grouped; the ranks that are not where
// most are get named. The same digests give the same verdict on every node.
#pragma once

#include <string>
#include <vector>

#include "flight/collective_digest.hpp"

namespace aml {

// What one rank was doing when the job was found hung: short enough to cross nodes.
struct RankPlace {
  int rank = -1;
  int node_rank = 0;
  std::string place;            // "load_batch (train.py:9)", "read", "wchan pipe_read"; "" unknown
  std::string detail;           // "S (sleeping) in hrtimer_nanosleep, 0.00 s CPU, 3 threads"
  RankCollectives collectives;  // its flight recorder's digest, where one was asked
};

// The ranks hang_verdict names as out of place (none where all are in one place, or no place
// holds most).
std::vector<int> odd_ranks(std::vector<RankPlace> ranks);

// "rank 2 (node 1) is in load_batch (train.py:9); ranks 0, 1, 3 wait in all_reduce
// (distributed_c10d.py:1536)"; where all are in one place: "every rank is in ...".
std::string hang_verdict(std::vector<RankPlace> ranks);

}  // namespace aml

// Who held a seat in the job's rounds, as the launcher that gives the seats (node 0) sees them:
// at each round it formed, which launchers are new to the job (node_joined) and which come
// back to a machine that held a seat before (node_returned: a launcher started again there,
// a spare or a benched node seated again), and which launchers of the round before hold
// another node rank now (node_moved: a node below them was lost or benched). The events the
// job's node 0 writes of the others.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rendezvous/node_info.hpp"

namespace aml {

struct SeatNews {
  const char* kind;  // "node_joined", "node_returned" or "node_moved"
  nlohmann::ordered_json details;
};

class SeatHistory {
 public:
  // The round `round`'s members (every node, as node 0 has them), but `self_node_rank`'s own:
  // what is news of them.
  std::vector<SeatNews> seated(int round, const std::vector<NodeInfo>& nodes, int self_node_rank);

 private:
  std::map<std::string, int> rank_of_;     // each launcher seated (host, pid, address): its
                                           // node rank in its last round
  std::map<std::string, int> last_round_;  // each machine's last round with a seat
};

}  // namespace aml

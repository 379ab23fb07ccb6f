// Who makes an elastic job's round, under which node rank, and when the round starts (DESIGN
// §5). Pure decisions, taken by whoever gives the seats (node 0's store's host, or under etcd
// the round's claimant) from what has joined so far.
#pragma once

#include <aml/topology.hpp>
#include <chrono>
#include <vector>

namespace aml {

// A launcher that joined a round, in the order they came.
struct Candidate {
  long id = 0;             // its launcher id, for the whole job (node 0's is 0)
  int previous_rank = -1;  // its node rank in the last round; -1: it was not in it
};

struct Membership {
  std::vector<long> by_rank;  // the members' ids; index = node rank
  std::vector<long> spares;   // beyond the most nodes: they wait for the next round
};

// Node 0's store's host (launcher 0) first where it is a candidate (it sits out a round it
// fails its checks in, and then the first seated is node 0), then the last round's members,
// then the others in the order they came, up to `max_nodes`. Node ranks are stable: a member keeps
// its rank where it is below the new node count; the free ranks go, lowest first, to the members
// that moved down (those with the lowest old ranks first) and then to the newcomers in the order
// they came.
Membership choose_members(const std::vector<Candidate>& joined, int max_nodes);

struct RoundCount {
  int joined = 0;   // launchers in the round so far, node 0 included
  int awaited = 0;  // last round's members not lost, not gone, and not joined yet
  std::chrono::milliseconds since_start{0};         // since node 0 began this round
  std::chrono::milliseconds since_last_arrival{0};  // since the last launcher joined
};

struct RoundTimes {
  std::chrono::milliseconds last_call{3000};  // --rdzv-last-call
  std::chrono::milliseconds node_timeout{60000};
  std::chrono::milliseconds rdzv_timeout{600000};
};

enum class RoundStart { now, wait, too_few };

// Now: the most nodes are in and no member of the last round is still on its way (one that
// does not come within --node-timeout is not waited for); or at least the fewest are, nobody
// is awaited, and nobody came for --rdzv-last-call. too_few: below the fewest at
// --rdzv-timeout.
RoundStart when_to_start(const RoundCount& count, NodeRange range, const RoundTimes& times);

}  // namespace aml

#include "flight/p2p_verdict.hpp"

#include <map>

namespace aml {
namespace {

// "send #4 of default_pg"
std::string p2p_text(const P2PCall& call, const GroupDigest& group) {
  return call.op + " #" + std::to_string(call.seq) + " of " + group_text(group);
}

nlohmann::ordered_json p2p_json(int rank, const P2PCall& call) {
  return {{"rank", rank},
          {"seq", call.seq},
          {"op", call.op},
          {"peer_group_rank", call.peer},
          {"sizes", call.sizes}};
}

}  // namespace

std::vector<P2PFinding> compare_p2p(
    const std::vector<std::pair<int, const GroupDigest*>>& members) {
  std::vector<P2PFinding> out;
  // The job's rank of each group rank, from what each rank says of itself.
  std::map<int, std::size_t> at;  // group rank -> index in members
  bool default_group = false;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const GroupDigest* g = members[i].second;
    if (g == nullptr) continue;
    default_group = default_group || g->id == "0";
    if (g->p2p_open) at[g->p2p_open->self] = i;
  }
  const auto peer_of = [&](const P2PCall& call) -> const std::pair<int, const GroupDigest*>* {
    if (auto found = at.find(call.peer); found != at.end()) return &members[found->second];
    if (!default_group) return nullptr;
    for (const auto& m : members) {
      if (m.first == call.peer) return &m;  // the default group's ranks are the job's
    }
    return nullptr;
  };
  for (const auto& [rank, group] : members) {
    if (group == nullptr || !group->p2p_open) continue;
    const P2PCall& mine = *group->p2p_open;
    const auto* peer = peer_of(mine);
    const std::string peer_name = peer != nullptr ? "rank " + std::to_string(peer->first)
                                                  : "group rank " + std::to_string(mine.peer);
    const P2PCall* theirs = peer != nullptr && peer->second != nullptr && peer->second->p2p_open &&
                                    peer->second->p2p_open->peer == mine.self
                                ? &*peer->second->p2p_open
                                : nullptr;
    P2PFinding f;
    f.json["group"] = group_text(*group);
    if (theirs != nullptr) {
      if (peer->first < rank) continue;  // the pair is said once, from its lower rank
      const std::string pair =
          "ranks " + std::to_string(rank) + " and " + std::to_string(peer->first);
      if (mine.op == theirs->op) {
        f.text = pair + " each wait to " + mine.op + (mine.op == "send" ? " to" : " from") +
                 " the other (" + p2p_text(mine, *group) + ", " + theirs->op + " #" +
                 std::to_string(theirs->seq) + "): neither " +
                 (mine.op == "send" ? "posted its recv" : "sent");
        f.json["kind"] = "p2p_deadlock";
      } else {
        f.text = pair + " both wait in their " +
                 (mine.op == "send" ? "send and recv" : "recv and send") + " to each other (" +
                 p2p_text(mine, *group) + ", " + theirs->op + " #" + std::to_string(theirs->seq) +
                 ") and neither completed it";
        f.json["kind"] = "p2p_not_completed";
      }
      f.named = {rank, peer->first};
      f.json["calls"] = {p2p_json(rank, mine), p2p_json(peer->first, *theirs)};
    } else {
      // The peer is elsewhere: in another p2p call, a collective, or past them all.
      const bool send = mine.op == "send";
      f.text = "rank " + std::to_string(rank) + " waits in " + p2p_text(mine, *group) +
               (send ? " to " : " from ") + peer_name + ", which " +
               (peer == nullptr ? "did not say where it is"
                : send          ? "never posted the matching recv"
                                : "never sent");
      f.named = {peer != nullptr ? peer->first : rank};
      f.json["kind"] = "p2p_unmatched";
      f.json["calls"] = {p2p_json(rank, mine)};
    }
    f.json["ranks"] = f.named;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace aml

#include "rendezvous/membership.hpp"

#include <algorithm>

namespace aml {

Membership choose_members(const std::vector<Candidate>& joined, int max_nodes) {
  // Node 0, then the last round's members by their old rank, then newcomers as they came.
  std::vector<Candidate> order = joined;
  std::stable_sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) {
    auto priority = [](const Candidate& c) {
      return c.id == 0 ? -1 : c.previous_rank >= 0 ? c.previous_rank : 1 << 30;
    };
    return priority(a) < priority(b);
  });
  Membership out;
  const std::size_t count = std::min<std::size_t>(order.size(), std::max(0, max_nodes));
  for (std::size_t i = count; i < order.size(); ++i) out.spares.push_back(order[i].id);
  order.resize(count);
  const int n = static_cast<int>(count);
  out.by_rank.assign(count, -1);
  std::vector<const Candidate*> unplaced;
  for (const Candidate& c : order) {
    const int keep = c.id == 0 ? 0 : c.previous_rank;
    if (keep >= 0 && keep < n && out.by_rank[static_cast<std::size_t>(keep)] == -1) {
      out.by_rank[static_cast<std::size_t>(keep)] = c.id;
    } else {
      unplaced.push_back(&c);
    }
  }
  std::size_t next = 0;
  for (long& slot : out.by_rank) {
    if (slot == -1) slot = unplaced[next++]->id;
  }
  return out;
}

RoundStart when_to_start(const RoundCount& count, NodeRange range, const RoundTimes& times) {
  const bool late_ones_given_up = count.awaited == 0 || count.since_start >= times.node_timeout;
  if (count.joined >= range.max && late_ones_given_up) return RoundStart::now;
  if (count.joined >= range.min) {
    if (count.awaited > 0) return late_ones_given_up ? RoundStart::now : RoundStart::wait;
    return count.since_last_arrival >= times.last_call ? RoundStart::now : RoundStart::wait;
  }
  return count.since_start >= times.rdzv_timeout ? RoundStart::too_few : RoundStart::wait;
}

}  // namespace aml

#include "supervisor/hang_verdict.hpp"

#include <algorithm>
#include <map>

namespace aml {
namespace {

// "ranks 0, 1 and 3" / "rank 2"
std::string ranks_text(const std::vector<const RankPlace*>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]->rank);
  }
  return text;
}

// The nodes of a group, when they are not all node 0: "(node 1)", "(nodes 0 and 1)".
std::string nodes_text(const std::vector<const RankPlace*>& ranks) {
  std::vector<int> nodes;
  for (const RankPlace* r : ranks) nodes.push_back(r->node_rank);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (nodes.size() == 1 && nodes.front() == 0) return "";
  std::string text = nodes.size() == 1 ? " (node " : " (nodes ";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0) text += i + 1 == nodes.size() ? " and " : ", ";
    text += std::to_string(nodes[i]);
  }
  return text + ")";
}

std::string place_text(const std::string& place) {
  return place.empty() ? "an unknown place" : place;
}

using ByPlace = std::map<std::string, std::vector<const RankPlace*>>;

// The most common place is where the job waits; ties go to the place of the lowest rank among
// them (every node sorts the same way).
const std::vector<const RankPlace*>* most_common(const ByPlace& by_place) {
  const std::vector<const RankPlace*>* most = nullptr;
  for (const auto& [place, group] : by_place) {
    if (most == nullptr || group.size() > most->size() ||
        (group.size() == most->size() && group.front()->rank < most->front()->rank)) {
      most = &group;
    }
  }
  return most;
}

}  // namespace

std::string hang_verdict(std::vector<RankPlace> ranks) {
  if (ranks.empty()) return "no rank could be looked at";
  std::sort(ranks.begin(), ranks.end(),
            [](const RankPlace& a, const RankPlace& b) { return a.rank < b.rank; });
  ByPlace by_place;
  for (const RankPlace& r : ranks) by_place[r.place].push_back(&r);
  if (by_place.size() == 1) {
    return (ranks.size() == 1 ? "the only rank is in " : "every rank is in ") +
           place_text(ranks.front().place) + ": none is the odd one out";
  }
  const std::vector<const RankPlace*>* most = most_common(by_place);
  std::vector<const std::vector<const RankPlace*>*> odd;
  std::size_t as_many = 0;  // other places holding as many ranks: no majority to stand out from
  for (const auto& [place, group] : by_place) {
    if (&group != most) odd.push_back(&group);
    if (&group != most && group.size() == most->size()) ++as_many;
  }
  if (as_many > 0) {
    std::string text = "no place holds most ranks: ";
    std::vector<const std::vector<const RankPlace*>*> all = odd;
    all.push_back(most);
    std::sort(all.begin(), all.end(),
              [](const auto* a, const auto* b) { return a->front()->rank < b->front()->rank; });
    for (std::size_t i = 0; i < all.size(); ++i) {
      text += (i > 0 ? "; " : "") + ranks_text(*all[i]) + nodes_text(*all[i]) +
              (all[i]->size() == 1 ? " is in " : " are in ") + place_text(all[i]->front()->place);
    }
    return text;
  }
  // The fewest first: one rank alone elsewhere is the likeliest culprit.
  std::sort(odd.begin(), odd.end(), [](const auto* a, const auto* b) {
    return a->size() != b->size() ? a->size() < b->size() : a->front()->rank < b->front()->rank;
  });
  std::string text;
  for (const auto* group : odd) {
    text += (text.empty() ? "" : "; ") + ranks_text(*group) + nodes_text(*group) +
            (group->size() == 1 ? " is in " : " are in ") + place_text(group->front()->place);
  }
  text += "; " + ranks_text(*most) + nodes_text(*most) +
          (most->size() == 1 ? " waits in " : " wait in ") + place_text(most->front()->place);
  return text;
}

std::vector<int> odd_ranks(std::vector<RankPlace> ranks) {
  if (ranks.empty()) return {};
  std::sort(ranks.begin(), ranks.end(),
            [](const RankPlace& a, const RankPlace& b) { return a.rank < b.rank; });
  ByPlace by_place;
  for (const RankPlace& r : ranks) by_place[r.place].push_back(&r);
  const std::vector<const RankPlace*>* most = most_common(by_place);
  std::vector<int> odd;
  for (const auto& [place, group] : by_place) {
    if (&group == most) continue;
    if (group.size() == most->size()) return {};  // no place holds most
    for (const RankPlace* r : group) odd.push_back(r->rank);
  }
  std::sort(odd.begin(), odd.end());
  return odd;
}

}  // namespace aml

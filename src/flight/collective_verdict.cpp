#include "flight/collective_verdict.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include "flight/p2p_verdict.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {
namespace {

using Status = RankCollectives::Status;

// "rank 2", "ranks 0, 1 and 3"
std::string ranks_text(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

std::string others_text(std::size_t n) {
  return n == 1 ? "the one other" : "the " + std::to_string(n) + " others";
}

std::string time_text(std::int64_t epoch_ns) {
  return utc_timestamp(std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(epoch_ns))));
}

nlohmann::ordered_json call_json(const CollectiveCall& call) {
  return {{"seq", call.seq}, {"op", call.op}, {"sizes", call.sizes}, {"dtypes", call.dtypes}};
}

struct Member {
  int rank;
  const GroupDigest* group;  // null: the rank has no entry of the group (never called one)
};

struct Finding {
  std::string text;
  std::vector<int> named;
  nlohmann::ordered_json json;
};

// One group's members compared; nullopt where nothing in it is amiss.
std::optional<Finding> compare_group(const std::vector<Member>& members) {
  const GroupDigest* any = nullptr;
  std::int64_t newest = -1;
  for (const Member& m : members) {
    if (m.group && m.group->enqueued.seq > newest) {
      newest = m.group->enqueued.seq;
      any = m.group;
    }
  }
  if (any == nullptr) return std::nullopt;
  std::vector<int> ahead, behind;
  std::int64_t since = 0;
  const GroupDigest* at = nullptr;  // an ahead rank's digest: the call the others did not enter
  for (const Member& m : members) {
    const std::int64_t seq = m.group ? m.group->enqueued.seq : 0;
    if (seq < newest) {
      behind.push_back(m.rank);
      continue;
    }
    ahead.push_back(m.rank);
    if (at == nullptr) at = m.group;
    const std::int64_t created = m.group->enqueued.created_ns;
    if (created > 0 && (since == 0 || created < since)) since = created;
  }
  Finding f;
  f.json["group"] = group_text(*at);
  if (!behind.empty()) {
    // Those behind by their last call: "rank 5 never entered all_reduce #9 of default_pg (its
    // last: all_reduce #8)".
    std::map<std::int64_t, std::vector<int>> by_last;
    for (const Member& m : members) {
      if (std::find(behind.begin(), behind.end(), m.rank) != behind.end()) {
        by_last[m.group ? m.group->enqueued.seq : 0].push_back(m.rank);
      }
    }
    f.text = ranks_text(behind) + " never entered " + call_text(at->enqueued, *at);
    std::string lasts;
    for (const auto& [seq, ranks] : by_last) {
      const Member* one = nullptr;
      for (const Member& m : members) {
        if (m.rank == ranks.front()) one = &m;
      }
      std::string last =
          one && one->group
              ? (one->group->enqueued.op.empty() ? "a collective" : one->group->enqueued.op) +
                    " #" + std::to_string(seq)
              : "none";
      lasts += (lasts.empty() ? "" : "; ") +
               (by_last.size() > 1 ? ranks_text(ranks) + "'s last: " : std::string()) + last;
    }
    f.text += " (" +
              std::string(by_last.size() > 1   ? ""
                          : behind.size() == 1 ? "its last: "
                                               : "their last: ") +
              lasts + "); " + others_text(ahead.size()) + (ahead.size() == 1 ? " has" : " have") +
              " waited in it" + (since > 0 ? " since " + time_text(since) : "");
    f.named = behind;
    f.json["kind"] = "behind";
    f.json["ranks"] = behind;
    f.json["waiting"] = ahead;
    f.json["call"] = call_json(at->enqueued);
    if (since > 0) f.json["waiting_since"] = time_text(since);
    return f;
  }
  // All at one sequence number: the same call? Grouped by what they called, the fewest named.
  using Shape = std::tuple<std::string, std::string, std::string>;
  std::map<Shape, std::vector<int>> by_shape;
  for (const Member& m : members) {
    if (m.group == nullptr) return std::nullopt;  // (not reached: it would be behind)
    const CollectiveCall& c = m.group->enqueued;
    by_shape[{c.op, c.sizes, c.dtypes}].push_back(m.rank);
  }
  if (by_shape.size() > 1) {
    auto most = by_shape.begin();
    for (auto it = by_shape.begin(); it != by_shape.end(); ++it) {
      if (it->second.size() > most->second.size() ||
          (it->second.size() == most->second.size() && it->second.front() < most->second.front()))
        most = it;
    }
    const auto& [op, sizes, dtypes] = most->first;
    std::string text;
    auto& odd = f.json["odd"] = nlohmann::ordered_json::array();
    for (auto it = by_shape.begin(); it != by_shape.end(); ++it) {
      if (it == most) continue;
      const auto& [o, s, d] = it->first;
      std::string what =
          o != op ? o + " (#" + std::to_string(newest) + " of " + group_text(*at) + ") where " +
                        others_text(most->second.size()) + " called " + op
          : s != sizes
              ? o + " #" + std::to_string(newest) + " of " + group_text(*at) + " with sizes " + s +
                    " where " + others_text(most->second.size()) + " had " + sizes
              : o + " #" + std::to_string(newest) + " of " + group_text(*at) + " with dtypes " + d +
                    " where " + others_text(most->second.size()) + " had " + dtypes;
      text += (text.empty() ? "" : "; ") + ranks_text(it->second) + " called " + what;
      f.named.insert(f.named.end(), it->second.begin(), it->second.end());
      odd.push_back({{"ranks", it->second}, {"op", o}, {"sizes", s}, {"dtypes", d}});
    }
    f.text = text;
    std::sort(f.named.begin(), f.named.end());
    f.json["kind"] = "mismatch";
    f.json["ranks"] = f.named;
    f.json["call"] = call_json(at->enqueued);
    return f;
  }
  // The same call everywhere: completed by all (nothing here), by some, or by none.
  std::vector<int> open;
  for (const Member& m : members) {
    if (m.group->completed < newest) open.push_back(m.rank);
  }
  if (open.empty()) return std::nullopt;
  if (open.size() == members.size()) {
    f.text = (members.size() == 1 ? "the only rank" : "every rank") + std::string(" entered ") +
             call_text(at->enqueued, *at) + " and none completed it" +
             (since > 0 ? " (since " + time_text(since) + ")" : "");
    f.json["kind"] = "not_completed";
  } else {
    f.named = open;
    f.text = ranks_text(open) + " did not complete " + call_text(at->enqueued, *at) + "; " +
             others_text(members.size() - open.size()) + " did";
    f.json["kind"] = "not_completed_by_some";
  }
  f.json["ranks"] = open;
  f.json["call"] = call_json(at->enqueued);
  return f;
}

}  // namespace

CollectiveVerdict collective_verdict(std::vector<RankCollectiveDigest> ranks) {
  CollectiveVerdict v;
  std::sort(ranks.begin(), ranks.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  std::vector<int> no_dump, no_recorder;
  auto unreadable = nlohmann::ordered_json::array();
  std::vector<int> unreadable_ranks;
  std::vector<const RankCollectiveDigest*> read;
  for (const auto& r : ranks) {
    const Status s = r.collectives ? r.collectives->status : Status::not_asked;
    if (s == Status::read) read.push_back(&r);
    if (s == Status::no_dump) no_dump.push_back(r.rank);
    if (s == Status::no_recorder) no_recorder.push_back(r.rank);
    if (s == Status::unreadable) {
      unreadable_ranks.push_back(r.rank);
      unreadable.push_back({{"rank", r.rank}, {"why", r.collectives->why}});
    }
  }
  if (read.empty() && no_dump.empty() && unreadable_ranks.empty()) {
    // Not torch (nothing to say), or a torch whose recorder did not listen: said.
    if (no_recorder.empty()) return v;
    v.json = {{"status", "no_recorder"}, {"ranks", no_recorder}};
    v.line =
        (no_recorder.size() == ranks.size() ? std::string("no rank's flight recorder")
                                            : "the flight recorder of " + ranks_text(no_recorder)) +
        " answered its pipe (a torch without one, or no NCCL process group): the stacks "
        "alone say where the ranks are";
    return v;
  }
  // Every group any rank speaks of, the default group ("0") first; a rank that read its dump
  // without an entry of the default group never called a collective there.
  std::set<std::string> ids;
  for (const auto* r : read) {
    for (const GroupDigest& g : r->collectives->groups) ids.insert(g.id);
  }
  std::vector<std::string> order(ids.begin(), ids.end());
  std::stable_partition(order.begin(), order.end(),
                        [](const std::string& id) { return id == "0"; });
  std::vector<std::string> texts;
  auto& findings = v.json["findings"] = nlohmann::ordered_json::array();
  for (const std::string& id : order) {
    std::vector<Member> members;
    for (const auto* r : read) {
      const GroupDigest* mine = nullptr;
      for (const GroupDigest& g : r->collectives->groups) {
        if (g.id == id) mine = &g;
      }
      if (mine != nullptr || id == "0") members.push_back({r->rank, mine});
    }
    if (auto found = compare_group(members)) {
      texts.push_back(found->text);
      v.named.insert(v.named.end(), found->named.begin(), found->named.end());
      findings.push_back(found->json);
    }
    std::vector<std::pair<int, const GroupDigest*>> pairs;
    for (const Member& m : members) pairs.emplace_back(m.rank, m.group);
    for (P2PFinding& found : compare_p2p(pairs)) {
      texts.push_back(found.text);
      v.named.insert(v.named.end(), found.named.begin(), found.named.end());
      findings.push_back(std::move(found.json));
    }
  }
  std::sort(v.named.begin(), v.named.end());
  v.named.erase(std::unique(v.named.begin(), v.named.end()), v.named.end());
  if (!no_dump.empty()) {
    texts.push_back("the dump of " + ranks_text(no_dump) + " never came");
  }
  if (!unreadable_ranks.empty()) {
    texts.push_back("the dump of " + ranks_text(unreadable_ranks) + " could not be read (" +
                    unreadable.front()["why"].get<std::string>() + ")");
  }
  if (!no_recorder.empty()) {
    texts.push_back("the flight recorder of " + ranks_text(no_recorder) +
                    " did not answer its pipe");
  }
  if (texts.empty() && !read.empty()) {
    texts.push_back("every rank completed every collective it enqueued: the hang is outside them");
  }
  for (std::size_t i = 0; i < texts.size(); ++i) v.line += (i ? "; " : "") + texts[i];
  v.json["status"] = findings.empty() ? "nothing_amiss" : "named";
  v.json["line"] = v.line;
  v.json["ranks"] = v.named;
  v.json["no_dump"] = no_dump;
  v.json["no_recorder"] = no_recorder;
  v.json["unreadable"] = unreadable;
  return v;
}

}  // namespace aml

#include "flight/rank_lateness.hpp"

#include <algorithm>
#include <map>

namespace aml {
namespace {

constexpr std::size_t kMaxCalls = 256;  // a group's calls read from the crossing form
constexpr std::size_t kMaxGroups = 64;  // a rank's groups read from it
constexpr std::size_t kMaxText = 64;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

std::string short_text(const nlohmann::json& j) {
  if (!j.is_string()) return "";
  std::string s = j.get<std::string>();
  if (s.size() > kMaxText) s.resize(kMaxText);
  return s;
}

}  // namespace

nlohmann::json rank_calls_json(const std::vector<RankCalls>& ranks, std::int64_t offset_ns) {
  nlohmann::json out = nlohmann::json::array();
  for (const RankCalls& r : ranks) {
    nlohmann::json groups = nlohmann::json::array();
    for (const GroupDigest& g : r.groups) {
      if (g.recent.empty()) continue;
      const std::int64_t t0 = g.recent.front().created_ns + offset_ns;
      nlohmann::json calls = nlohmann::json::array();
      for (const TimedCall& c : g.recent) {
        // Microseconds after the first: a few digits a call.
        calls.push_back({c.seq, (c.created_ns + offset_ns - t0) / 1000, c.mark});
      }
      groups.push_back({{"id", g.id}, {"desc", g.desc}, {"t0", t0}, {"calls", std::move(calls)}});
    }
    out.push_back({{"rank", r.rank}, {"node", r.node}, {"groups", std::move(groups)}});
  }
  return out;
}

std::vector<RankCalls> rank_calls_from_json(const nlohmann::json& j) {
  std::vector<RankCalls> out;
  if (!j.is_array()) return out;
  for (const auto& r : j) {
    if (!r.is_object() || !r.value("rank", nlohmann::json()).is_number_integer()) continue;
    RankCalls calls;
    calls.rank = r["rank"].get<int>();
    const auto node = r.value("node", nlohmann::json());
    calls.node = node.is_number_integer() ? node.get<int>() : 0;
    const auto groups = r.value("groups", nlohmann::json());
    for (std::size_t i = 0; groups.is_array() && i < groups.size() && i < kMaxGroups; ++i) {
      const auto& g = groups[i];
      if (!g.is_object() || !g.value("t0", nlohmann::json()).is_number_integer()) continue;
      GroupDigest d;
      d.id = short_text(g.value("id", nlohmann::json()));
      d.desc = short_text(g.value("desc", nlohmann::json()));
      const std::int64_t t0 = g["t0"].get<std::int64_t>();
      const auto list = g.value("calls", nlohmann::json());
      for (std::size_t k = 0; list.is_array() && k < list.size() && k < kMaxCalls; ++k) {
        const auto& c = list[k];
        if (!c.is_array() || c.size() != 3 || !c[0].is_number_integer() ||
            !c[1].is_number_integer() || !c[2].is_number_unsigned())
          continue;
        d.recent.push_back({c[0].get<std::int64_t>(), t0 + c[1].get<std::int64_t>() * 1000,
                            c[2].get<std::uint32_t>()});
      }
      calls.groups.push_back(std::move(d));
    }
    out.push_back(std::move(calls));
  }
  return out;
}

double LatenessSample::share() const {
  if (last < 0 || step_seconds <= 0) return 0;
  return ranks[last].seconds / step_seconds;
}

LatenessSample measure_lateness(const std::vector<RankCalls>& ranks) {
  LatenessSample sample;
  std::vector<double> sums(ranks.size(), 0);
  std::vector<int> counts(ranks.size(), 0);
  std::vector<double> same_call_gaps, next_call_gaps;
  // Each group: the ranks that hold it, and each call's time at each of them.
  std::map<std::string, std::vector<std::pair<std::size_t, const GroupDigest*>>> holders;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    for (const GroupDigest& g : ranks[i].groups) holders[g.id].push_back({i, &g});
  }
  for (const auto& [id, held] : holders) {
    if (held.size() < 2) continue;
    struct Call {
      std::vector<std::int64_t> at;  // by holder
      std::uint32_t mark = 0;
    };
    std::map<std::int64_t, Call> calls;
    for (std::size_t h = 0; h < held.size(); ++h) {
      for (const TimedCall& c : held[h].second->recent) {
        Call& call = calls[c.seq];
        call.at.resize(held.size(), INT64_MIN);
        call.at[h] = c.created_ns;
        call.mark = c.mark;
      }
    }
    std::map<std::uint32_t, std::int64_t> last_of_mark;
    std::int64_t previous = INT64_MIN;
    for (const auto& [seq, call] : calls) {
      // Compared where every holder has it: a window's edge is not lateness.
      if (std::count(call.at.begin(), call.at.end(), INT64_MIN) > 0) continue;
      const std::int64_t earliest = *std::min_element(call.at.begin(), call.at.end());
      for (std::size_t h = 0; h < held.size(); ++h) {
        sums[held[h].first] += (call.at[h] - earliest) / 1e9;
        ++counts[held[h].first];
      }
      ++sample.compared;
      if (auto seen = last_of_mark.find(call.mark); seen != last_of_mark.end())
        same_call_gaps.push_back((earliest - seen->second) / 1e9);
      last_of_mark[call.mark] = earliest;
      if (previous != INT64_MIN) next_call_gaps.push_back((earliest - previous) / 1e9);
      previous = earliest;
    }
  }
  sample.step_seconds = median(same_call_gaps.empty() ? next_call_gaps : same_call_gaps);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (counts[i] == 0) continue;
    sample.ranks.push_back({ranks[i].rank, ranks[i].node, sums[i] / counts[i], counts[i]});
  }
  std::sort(sample.ranks.begin(), sample.ranks.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (std::size_t i = 0; i < sample.ranks.size(); ++i) {
    if (sample.last < 0 || sample.ranks[i].seconds > sample.ranks[sample.last].seconds)
      sample.last = static_cast<int>(i);
  }
  return sample;
}

}  // namespace aml

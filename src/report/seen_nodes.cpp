#include "report/seen_nodes.hpp"

#include <algorithm>

#include "report/event_fields.hpp"

namespace aml {

using Json = nlohmann::ordered_json;

SeenNodes::Seen& SeenNodes::node_named(const Json& event, const Json& details) {
  const std::string run_id = event.value("run_id", "");
  // A node rank is the launcher last seated in it (node_joined, node_returned, node_moved: each
  // line that seats a launcher names its pid).
  const std::string seat = run_id + "\n" + std::to_string(event_int(details, "node_rank"));
  const std::string host = event_text(details, "host");
  std::string launcher;
  if (auto pid = details.find("pid"); pid != details.end() && pid->is_number_integer()) {
    launcher = run_id + "\n" + host + "\n" + pid->dump();
    seat_of_[seat] = launcher;
  } else if (auto known = seat_of_.find(seat); known != seat_of_.end()) {
    launcher = known->second;
  } else {
    launcher = run_id + "\n" + host + "\n#" + std::to_string(event_int(details, "node_rank"));
  }
  Seen& node = seen_[launcher];
  node.host = host;
  node.run_id = run_id;
  if (node.pid == 0) node.pid = std::max(event_int(details, "pid"), 0);
  node.node_rank = event_int(details, "node_rank");
  return node;
}

void SeenNodes::note(const Json& event, std::size_t row) {
  const std::string kind = event.value("kind", "");
  const bool seated = kind == "node_joined" || kind == "node_returned";
  const bool gone = kind == "node_lost" || kind == "node_benched";
  const bool moved = kind == "node_moved";
  if (!seated && !gone && !moved && kind != "failure_elsewhere") return;
  const Json& details = event["details"];
  // Node 0 writes these of other nodes; a node lost that is itself (its own pause) is its own.
  if (event_int(details, "node_rank") == event.value("node_rank", -2)) return;
  Seen& node = node_named(event, details);
  node.by = row;
  if (moved) return;  // still seated: what names its new rank from here is filed under it
  const long long at = event["_ms"].get<long long>();
  if (seated) {
    if (node.seated.empty() || node.seated.back().second >= 0) node.seated.push_back({at, -1});
    node.gone = false;
    if (kind == "node_returned") node.marks.push_back({at, "returned", "came back"});
    // New to the job after round 0: it waited for a seat (a hot spare, a newcomer), and took one.
    if (kind == "node_joined" && event.value("round", 0) > 0)
      node.marks.push_back(
          {at, "spare_taken", "spare taken: node " + event_text(details, "node_rank")});
    return;
  }
  if (node.seated.empty()) node.seated.push_back({-1, -1});  // seated before node 0 wrote
  if (gone && node.seated.back().second < 0) node.seated.back().second = at;
  node.gone = gone;
  if (kind == "failure_elsewhere") {
    node.marks.push_back(
        {at, "failure",
         "rank " + event_text(details, "rank") + ": " + event_text(details, "status")});
  } else if (kind == "node_lost") {
    node.marks.push_back({at, "lost", "lost: " + event_text(details, "status")});
  } else {
    node.marks.push_back({at, "benched", "benched: " + event_text(details, "reason")});
  }
}

void SeenNodes::add_rows(std::vector<StoryRow>& rows) const {
  const std::size_t written = rows.size();
  for (const auto& entry : seen_) {
    const Seen& node = entry.second;
    const bool own_lines =
        std::any_of(rows.begin(), rows.begin() + written, [&](const StoryRow& r) {
          return r.run_id == node.run_id && r.host == node.host &&
                 (node.pid > 0 ? r.pid == node.pid : r.node_rank == node.node_rank);
        });
    if (own_lines || node.by >= written) continue;
    const StoryRow& by = rows[node.by];
    StoryRow row;
    row.source = by.source;
    row.run_id = node.run_id;
    row.host = node.host;
    row.pid = node.pid;
    row.node_rank = node.node_rank;
    row.seen_by = by.host;
    row.marks = node.marks;
    row.ended = by.ended && !node.gone;
    row.exit_code = row.ended ? by.exit_code : -1;
    for (const StoryBar& bar : by.bars) {
      for (const auto& [from, to] : node.seated) {
        const long long start = std::max(bar.from_ms, from);
        const long long end = to < 0 ? bar.to_ms : std::min(bar.to_ms, to);
        if (start >= end) continue;
        row.bars.push_back({bar.phase, start, end, bar.round});
        row.seconds[static_cast<std::size_t>(bar.phase)] += static_cast<double>(end - start) / 1000;
      }
    }
    rows.push_back(std::move(row));
  }
}

}  // namespace aml

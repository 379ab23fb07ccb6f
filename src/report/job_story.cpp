#include "report/job_story.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "report/event_fields.hpp"
#include "report/seen_nodes.hpp"

namespace aml {
namespace {

using Json = nlohmann::ordered_json;

// The schema's keys with their types (a line of another file, or a hand-edited one, is left
// out rather than read wrong).
bool is_event(const Json& e) {
  auto has = [&e](const char* key, auto is_type) {
    auto value = e.find(key);
    return value != e.end() && is_type(*value);
  };
  auto number_or_null = [](const Json& v) { return v.is_number_integer() || v.is_null(); };
  return e.is_object() && has("time", [](const Json& v) { return v.is_string(); }) &&
         has("kind", [](const Json& v) { return v.is_string(); }) &&
         has("host", [](const Json& v) { return v.is_string(); }) &&
         has("run_id", [](const Json& v) { return v.is_string(); }) &&
         has("round", [](const Json& v) { return v.is_number_integer(); }) &&
         has("node_rank", number_or_null) && has("rank", number_or_null) &&
         has("details", [](const Json& v) { return v.is_object(); });
}

GoodputClock::Clock::time_point as_time(long long ms) {
  return GoodputClock::Clock::time_point(std::chrono::milliseconds(ms));
}

long long as_millis(GoodputClock::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// One launcher's lines: its bars (the clock fed with their times) and its marks.
StoryRow read_row(const std::string& source, const std::vector<Json>& events) {
  StoryRow row;
  row.source = source;
  const long long first = events.front()["_ms"].get<long long>();
  GoodputClock clock(as_time(first));
  bool spare = false;
  long long last = first;
  for (const Json& e : events) {
    const long long at = e["_ms"].get<long long>();
    last = std::max(last, at);
    const std::string kind = e.value("kind", "");
    const Json& details =
        e.contains("details") && e["details"].is_object() ? e["details"] : Json::object();
    const int rank = e.contains("rank") && e["rank"].is_number() ? e["rank"].get<int>() : -1;
    row.host = e.value("host", row.host);
    row.run_id = e.value("run_id", row.run_id);
    if (kind == "launch" && details.contains("pid") && details["pid"].is_number_integer())
      row.pid = details["pid"].get<long>();
    if (e.contains("node_rank") && e["node_rank"].is_number())
      row.node_rank = e["node_rank"].get<int>();
    clock.on_event({kind, details, rank, e.value("round", 0), row.node_rank, as_time(at)});
    if (kind == "failure") {
      row.marks.push_back(
          {at, "failure", "rank " + std::to_string(rank) + ": " + event_text(details, "status")});
    } else if (kind == "node_benched") {
      // Another launcher's bench goes on its row (read_job_story), not on the decider's.
      if (event_text(details, "host") == row.host && event_int(details, "pid") == row.pid)
        row.marks.push_back({at, "benched", "benched: " + event_text(details, "reason")});
    } else if (kind == "spare_waiting") {
      spare = true;
      row.marks.push_back({at, "spare", "waits as a spare"});
    } else if (kind == "benched_waiting") {
      spare = true;
      row.marks.push_back({at, "sitting_out", "benched, sits out: " + event_text(details, "why")});
    } else if (kind == "rendezvous_formed" && spare) {
      spare = false;
      row.marks.push_back(
          {at, "spare_taken", "spare taken: node " + std::to_string(row.node_rank)});
    } else if (kind == "stop") {
      row.marks.push_back(
          {at, "stop",
           "stop: " + event_text(details, "signal_name") + event_text(details, "sender")});
    } else if (kind == "notice") {
      row.marks.push_back({at, "notice", "notice: " + event_text(details, "kind")});
    } else if (kind == "hang") {
      row.marks.push_back({at, "hang", "hang verdict"});
    } else if (kind == "node_lost") {
      row.marks.push_back({at, "lost",
                           "node " + event_text(details, "node_rank") + " (" +
                               event_text(details, "host") + ") lost"});
    } else if (kind == "launcher_killed") {
      row.marks.push_back({at, "killed", "launcher killed"});
    } else if (kind == "end") {
      row.ended = true;
      auto code = details.find("exit_code");
      row.exit_code = code != details.end() && code->is_number_integer() ? code->get<int>() : -1;
    }
  }
  for (const auto& interval : clock.intervals(as_time(last))) {
    row.bars.push_back(
        {interval.phase, as_millis(interval.from), as_millis(interval.to), interval.round});
  }
  row.seconds = clock.totals(as_time(last));
  return row;
}

// A bench on the row of the launcher benched, where its own lines are drawn (else SeenNodes
// draws it as node 0 saw it, the mark with it). Each bench counted once: the decider's file,
// the job's file and (fixed-size) every node's say it.
void place_benches(const std::vector<std::pair<long long, Json>>& benches, JobStory& story) {
  std::set<std::string> counted;
  for (const auto& bench : benches) {
    const long long at = bench.first;  // not a structured binding: clang 14 cannot capture one
    const Json& details = bench.second;
    const std::string host = event_text(details, "host");
    const long pid = event_int(details, "pid");
    counted.insert(host + "\n" + event_text(details, "addr") + "\n" + std::to_string(pid) + "\n" +
                   event_text(details, "round"));
    for (StoryRow& row : story.rows) {
      if (!row.seen_by.empty() || row.host != host || pid <= 0 || row.pid != pid) continue;
      const StoryMark mark{at, "benched", "benched: " + event_text(details, "reason")};
      const bool has = std::any_of(row.marks.begin(), row.marks.end(), [&](const StoryMark& m) {
        return m.kind == "benched" && m.at_ms == at;
      });
      if (!has) row.marks.push_back(mark);
    }
  }
  story.benched = static_cast<int>(counted.size());
  for (StoryRow& row : story.rows) {
    std::stable_sort(row.marks.begin(), row.marks.end(),
                     [](const StoryMark& a, const StoryMark& b) { return a.at_ms < b.at_ms; });
  }
}

}  // namespace

long long utc_millis(const std::string& text) {
  std::tm utc{};
  int millis = 0;
  std::istringstream in(text);
  in >> std::get_time(&utc, "%Y-%m-%dT%H:%M:%S");
  if (in.fail() || in.get() != '.') return -1;
  in >> millis;
  if (in.fail()) return -1;
  return static_cast<long long>(timegm(&utc)) * 1000 + millis;
}

JobStory read_job_story(const std::vector<EventFile>& files) {
  JobStory story;
  SeenNodes seen;
  std::vector<std::pair<long long, Json>> benches;  // every node_benched line, with its time
  story.from_ms = -1;
  for (const EventFile& file : files) {
    // A file may hold several launchers' lines (one started again appends): one row each
    // host and run, in the file's order.
    std::vector<std::pair<std::string, std::vector<Json>>> launchers;
    std::istringstream lines(file.text);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      if (line.empty()) continue;
      Json e = Json::parse(line, nullptr, false);
      const long long at = is_event(e) ? utc_millis(e["time"].get<std::string>()) : -1;
      if (at < 0) {
        story.skipped.push_back(file.name + ":" + std::to_string(number) + ": not an event line");
        continue;
      }
      e["_ms"] = at;
      if (story.run_id.empty()) story.run_id = e.value("run_id", "");
      const std::string who = e.value("host", "") + "\n" + e.value("run_id", "");
      if (e.value("kind", "") == "launch" || launchers.empty() || launchers.back().first != who) {
        launchers.emplace_back(who, std::vector<Json>{});
      }
      launchers.back().second.push_back(std::move(e));
      story.from_ms = story.from_ms < 0 ? at : std::min(story.from_ms, at);
      story.to_ms = std::max(story.to_ms, at);
    }
    if (launchers.empty()) story.skipped.push_back(file.name + ": no event in it");
    for (const auto& [who, events] : launchers) {
      for (const Json& e : events) {
        const std::string kind = e.value("kind", "");
        if (kind == "restart" || kind == "regroup") {
          const long long at = e["_ms"].get<long long>();
          // Every node says it: one line for the job's restart.
          if (std::none_of(story.restarts.begin(), story.restarts.end(),
                           [at](long long t) { return std::llabs(t - at) < 2000; }))
            story.restarts.push_back(at);
        }
        if (kind == "round_started") story.rounds = std::max(story.rounds, e.value("round", 0) + 1);
        if (kind == "node_benched") benches.emplace_back(e["_ms"].get<long long>(), e["details"]);
      }
      story.rows.push_back(read_row(file.name, events));
      for (const Json& e : events) seen.note(e, story.rows.size() - 1);
    }
  }
  seen.add_rows(story.rows);
  place_benches(benches, story);
  for (const StoryRow& row : story.rows) {
    for (const StoryMark& mark : row.marks) {
      story.failures += mark.kind == "failure";
      story.spares_taken += mark.kind == "spare_taken";
    }
  }
  std::stable_sort(story.rows.begin(), story.rows.end(), [](const StoryRow& a, const StoryRow& b) {
    return a.node_rank != b.node_rank ? a.node_rank < b.node_rank : a.host < b.host;
  });
  std::sort(story.restarts.begin(), story.restarts.end());
  return story;
}

}  // namespace aml

// `aml-launch report` (DESIGN §6b): the job's story read back from the launchers' event files —
// a row per launcher (its phases along time, from the goodput clock) with its marks (a failure,
// a node benched, a spare taken, a stop, a notice, a hang), and the job's figures.
#pragma once

#include <string>
#include <vector>

#include "events/goodput_clock.hpp"

namespace aml {

struct StoryMark {
  long long at_ms = 0;  // UTC, milliseconds since the epoch
  // failure, benched, spare, spare_taken, stop, notice, hang, killed, lost, returned,
  // sitting_out
  std::string kind;
  std::string label;  // "rank 3: exit code 3"
};

struct StoryBar {
  GoodputClock::Phase phase;
  long long from_ms = 0, to_ms = 0;
  int round = 0;
};

struct StoryRow {
  std::string source;  // the file it came from
  std::string run_id;
  std::string host;
  long pid = 0;  // its launcher's (the launch line's), 0: not known
  // "": the launcher's own lines; else the host of the job's node 0, whose --job-events-file
  // drew this node (report/seen_nodes.hpp).
  std::string seen_by;
  int node_rank = -1;  // its last
  std::vector<StoryBar> bars;
  std::vector<StoryMark> marks;
  GoodputClock::Seconds seconds{};
  bool ended = false;  // its "end" was written (else: lost, or still running)
  int exit_code = -1;
};

struct JobStory {
  std::string run_id;
  long long from_ms = 0, to_ms = 0;
  std::vector<StoryRow> rows;       // by node rank, then host
  std::vector<long long> restarts;  // when the workers started again
  int rounds = 0;
  int failures = 0;
  int benched = 0;
  int spares_taken = 0;
  std::vector<std::string> skipped;  // lines that were not events: "FILE:LINE: why"
};

struct EventFile {
  std::string name;
  std::string text;
};

// The story of every file; a file without one event is said in `skipped`.
JobStory read_job_story(const std::vector<EventFile>& files);

// "2026-11-29T04:06:20.114Z" as milliseconds since the epoch; -1 where it is not one.
long long utc_millis(const std::string& text);

}  // namespace aml

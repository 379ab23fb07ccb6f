// One rank's flight recorder dump, reduced to what a hang verdict compares (DESIGN §6): per
// process group, the last collective it enqueued (sequence number, op, sizes, dtypes, when), the
// last one completed, and the oldest point-to-point call it has not completed. A few hundred bytes
// a group, so that it crosses nodes with the rank's place through the engine the job uses.
#pragma once

#include <climits>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "aml/error.hpp"

namespace aml {

struct CollectiveCall {
  std::int64_t seq = -1;        // the group's collective sequence number (1 is its first)
  std::string op;               // "all_reduce" (the backend's prefix, "nccl:", dropped)
  std::string sizes;            // "[[4]]": the input sizes
  std::string dtypes;           // "Float"
  std::int64_t created_ns = 0;  // when the rank enqueued it (the epoch, its node's clock)
};

// A call as the straggler check compares it: when the rank enqueued it, and a short mark of
// its op, sizes and dtypes (a step's calls come again with the same marks: the step's period).
struct TimedCall {
  std::int64_t seq = -1;
  std::int64_t created_ns = 0;
  std::uint32_t mark = 0;
};

// A point-to-point call (NCCL's "send 1->0", "recv 0<-1") a rank has not completed: the oldest
// of a group's is the one it waits in.
struct P2PCall {
  std::int64_t seq = -1;  // the group's p2p sequence number on this rank
  std::string op;         // "send", "recv"
  int self = -1;          // this rank's rank in the group
  int peer = -1;          // the other's
  std::string sizes;
  std::int64_t created_ns = 0;
};

struct GroupDigest {
  std::string id;                   // the process group's name in torch ("0" for the default group)
  std::string desc;                 // its description ("default_pg"), "" where torch has none
  CollectiveCall enqueued;          // the last one this rank enqueued
  std::int64_t completed = -1;      // the last sequence number it completed (-1: none)
  std::optional<P2PCall> p2p_open;  // the oldest p2p call not completed
  // The straggler check's (not in the crossing form): the newest completed calls enqueued by
  // the cut-off, oldest first.
  std::vector<TimedCall> recent;
};

// What digest_flight_dump keeps for the straggler check.
struct RecentCalls {
  std::size_t count = 0;                    // a group; 0: none
  std::int64_t enqueued_by_ns = INT64_MAX;  // the cut-off, the rank's clock
  // ... and after this (the last sample's cut-off): a sample sees only what is new, so that
  // one rank's pause for a moment counts in one sample, not in each whose window holds it.
  std::int64_t enqueued_after_ns = INT64_MIN;
};

// What the launcher got of a rank's recorder.
struct RankCollectives {
  enum class Status {
    not_asked,    // not a torch process, or the recorder is off (no --hang-timeout pipes)
    no_recorder,  // torch runs there, but nothing listened on its pipe (no recorder, no NCCL)
    no_dump,      // asked; no dump came within the wait
    unreadable,   // a dump came that could not be read: `why` says what was wrong
    read,
  };
  Status status = Status::not_asked;
  std::string why;
  std::vector<GroupDigest> groups;
};

// The groups a dump (read_pickle_subset's value) speaks of, or what is not as a flight recorder
// writes it. The newest `max_groups` groups are kept (a job with a group per layer).
Result<std::vector<GroupDigest>> digest_flight_dump(const nlohmann::json& dump,
                                                    std::size_t max_groups = 16,
                                                    const RecentCalls& recent = {});

// The crossing form, and back (fields past their bounds are cut; what is not there is empty).
nlohmann::json collectives_json(const RankCollectives& c);
RankCollectives collectives_from_json(const nlohmann::json& j);

// "all_reduce #8 of default_pg".
std::string call_text(const CollectiveCall& call, const GroupDigest& group);
// "default_pg", or "process group 3" where it has no description.
std::string group_text(const GroupDigest& group);

}  // namespace aml

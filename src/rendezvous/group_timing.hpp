// The node group's clocks and limits, shared by its parts (the rendezvous, the running round,
// the hang inquiry across nodes).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace aml::group_timing {

using std::chrono::milliseconds;

// Death and silence are different (DESIGN §5). A launcher that dies closes its connections: a
// follower's last will names it in the abort key at once, node 0's store goes away with it.
// Silence (a paused VM, a starved host) is loss only after --node-timeout. A follower sends a
// heartbeat 10 times in that span (within these bounds), one way: the store notes when it
// last heard each follower, and node 0 asks it for the silent ones (one call, not one per
// node). A follower learns that node 0's host is paused or cut off from its own kernel: a
// heartbeat not acknowledged within --node-timeout closes the connection (TCP_USER_TIMEOUT).
// No store call of a running job gives up sooner than --node-timeout.
inline constexpr milliseconds kFastestBeat{200};
inline constexpr milliseconds kSlowestBeat{6000};  // at 4,096 nodes, 0.7 % of a core on node 0
// While node 0 waits for the others to finish, it looks this often whether they have.
inline constexpr milliseconds kFinishTick{200};
inline constexpr milliseconds kShortestReplyTimeout{1500};
// Node 0 keeps the store up this long at most for the others to say goodbye.
inline constexpr milliseconds kGoodbyeWait{5000};
// The watch's wait is answered at least this often (a quarter of --node-timeout, within these).
inline constexpr milliseconds kShortestWatch{250};
inline constexpr milliseconds kLongestWatch{3600 * 1000};
// Under etcd, what every member hears at the same moment (a loss, a round's end) is acted on
// at once by node ranks 0 to this, by the others only if they have not: a thousand writes of
// one key would be a thousand raft rounds.
inline constexpr int kLastPromptRank = 2;
// Under etcd, the node ranks below this (and whoever gives a round's seats) set the wills of
// launchers whose leases ended: a few, since each will put is an event for every watcher, and
// enough that a will is not lost with them.
inline constexpr int kWillWatchers = 16;
inline constexpr std::size_t kKeysPerCall = 1000;  // below the store's limit for one check or wait
// Node 0 writes this into the abort key once every node's workers finished well: the same
// watch that would have brought a failure tells every follower the job is done.
inline constexpr std::string_view kComplete = "complete";
// The job's end (its exit status and report), for launchers still waiting for a round; under
// etcd also what makes a job id used again start a new generation of keys.
inline constexpr std::string_view kJobEndKey = "aml/elastic/end";

inline milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(
                                       deadline - std::chrono::steady_clock::now()));
}

inline std::string seconds_text(milliseconds ms) {
  auto s = ms.count() / 1000.0;
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

}  // namespace aml::group_timing

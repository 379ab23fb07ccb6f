// The node group's clocks and limits, shared by its parts (the rendezvous, the running round,
// the hang inquiry across nodes).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "store/core/wait_grid.hpp"
#include "util/seconds_text.hpp"

namespace aml::group_timing {

using std::chrono::milliseconds;

// Death and silence are different (DESIGN §5). A launcher that dies closes its connections: a
// follower's last will names it in the abort key at once, node 0's store goes away with it.
// Silence (a paused VM, a starved host) is loss only after --node-timeout. Under node 0's store
// a follower's signs of life cost node 0 one read and one send each a third of that span: the
// follower's watch on the abort key is a wait that the store answers when it times out
// (kShortestWatch..kLongestWatch), and the follower asks again at once. The store notes when it
// last heard each follower's watch, and node 0 asks it for the silent ones (one call, not one
// per node); a follower whose watch went unanswered for --node-timeout past its answer's time
// has lost node 0. Each side counts a silence from when the other's word was due (the store
// from its answer, the follower from its question's timeout), so that only a pause of
// --node-timeout itself is a loss, never one up to a watch interval shorter. (A
// one-way beat every tenth of the span, beside the watch, cost node 0 2.5 % of a core at rest
// with 4,096 nodes.) Under etcd each node's lease is its heartbeat. A follower ticks
// (looks at its clocks) 10 times in the span, within these bounds.
inline constexpr milliseconds kFastestBeat{200};
inline constexpr milliseconds kSlowestBeat{6000};
// While node 0 waits for the others to finish, it looks this often whether they have.
inline constexpr milliseconds kFinishTick{200};
inline constexpr milliseconds kShortestReplyTimeout{1500};
// Under etcd, a round's members waiting for node 0's verdict look this often (after their first
// wait of --node-timeout) whether its lease ended: a lease that ends just after a look is heard
// this late, not a whole --node-timeout later.
inline constexpr milliseconds kGoneRecheck{1000};
// Under etcd, whether a launcher waited on still holds its lease is asked at most this often
// (node_group_gone.cpp): its will, where nobody watched its lease end, is set this late.
inline constexpr milliseconds kLapseLook{5000};
// A waiting launcher's checks older than this are read again before it is counted in a round or
// runs one: a spare that turned sick while it waited is never seated on its old verdict.
inline constexpr milliseconds kChecksFresh{5000};
// Node 0 keeps the store up this long at most for the others to say goodbye.
inline constexpr milliseconds kGoodbyeWait{5000};
// The watch's wait is answered at least this often (a third of --node-timeout, within these).
inline constexpr milliseconds kShortestWatch{250};
inline constexpr milliseconds kLongestWatch{3600 * 1000};
// How much after its timeout the store may answer a long wait (its waits that end together
// are answered in one wake-up, on a grid of this step).
inline constexpr milliseconds kLateAnswer = store::kWaitGrid;
// Under etcd, what every member hears at the same moment (a loss, a round's end) is acted on
// at once by node ranks 0 to this, by the others only if they have not: a thousand writes of
// one key would be a thousand raft rounds.
inline constexpr int kLastPromptRank = 2;
// Under etcd, the node ranks below this (and whoever gives a round's seats) set the wills of
// launchers whose leases ended: a few, since each will put is an event for every watcher, and
// enough that a will is not lost with them.
inline constexpr int kWillWatchers = 16;
// While a round is not forming, node 0 says who has come in one key of the round this often:
// the other nodes' lines quote it, rather than each reading every node's entry.
inline constexpr milliseconds kArrivalsEvery{5000};
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

using aml::seconds_text;  // util/seconds_text.hpp

}  // namespace aml::group_timing

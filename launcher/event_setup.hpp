// --events-file (DESIGN §6b): where this launcher's events go, and the events only the
// launcher sees (the launch, the rendezvous, each round's end, the end); the supervisor's own
// (each worker's start and exit, a failure, a stop) are written in the round.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "events/event_log.hpp"
#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "rendezvous/node_group.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {

// Opened (its folder made) and begun with a "launch" event; null where no file is asked for.
Result<std::unique_ptr<EventLog>> open_events(const Options& options, const LaunchPlan& plan,
                                              const NodeIdentity& node);

// The nodes met for a round (`asked`: when this launcher began to wait): this node's place,
// the node count, the wait; or the job ended while this node waited (a spare never seated).
void rendezvous_formed_event(EventLog* events, const std::string& phase, const Agreement& agreed,
                             std::chrono::steady_clock::time_point asked);

// A round ended and the next is about to start (`next`: its restart count): the round's end,
// then the restart (or, where another node's failure regroups the nodes, the regroup).
void restart_events(EventLog* events, const RunOutcome& failed, const NodeIdentity& node, int next,
                    int max_restarts);

// The last round's end, then the job's end on this node.
void end_events(EventLog* events, const RunOutcome& outcome, const NodeIdentity& node);

}  // namespace aml

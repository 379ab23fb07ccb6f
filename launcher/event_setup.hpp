// --events-file, --job-events-file and --metrics-port (DESIGN §6b): where this launcher's
// events go and who follows them, and the events only the launcher sees (the launch, the
// rendezvous and on node 0 who was seated, each round's end, the end); the supervisor's own
// (each worker's start and exit, a failure, a stop) are written in the round.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "events/event_log.hpp"
#include "events/goodput_clock.hpp"
#include "metrics/metrics_board.hpp"
#include "metrics/metrics_server.hpp"
#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "rendezvous/node_group.hpp"
#include "seat_history.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {

// The job's events and who follows them: the file where one is asked for, the goodput clock
// (the summary's time), the metrics (--metrics-port).
struct JobWatch {
  std::unique_ptr<EventLog> log;  // never null: the stream, with a file or without
  GoodputClock clock;
  SeatHistory seats;  // on the node that gives a round's seats: who was seated before
  std::unique_ptr<MetricsBoard> board;    // null without --metrics-port
  std::unique_ptr<MetricsServer> server;  // last: its thread stops before the board goes
};

// The stream made (the file opened, its folder made; the metrics served) and begun with a
// "launch" event.
Result<std::unique_ptr<JobWatch>> watch_job(const Options& options, const LaunchPlan& plan,
                                            const NodeIdentity& node);

// The nodes met for a round (`asked`: when this launcher began to wait): this node's place,
// the node count, the wait; on the round's node 0, each launcher new to the job or back; or
// the job ended while this node waited (a spare never seated).
void rendezvous_formed_event(JobWatch& watch, const std::string& phase, const Agreement& agreed,
                             std::chrono::steady_clock::time_point asked);

// A round ended and the next is about to start (`next`: its restart count): the round's end,
// then the restart (or, where another node's failure regroups the nodes, the regroup).
void restart_events(EventLog* events, const RunOutcome& failed, const NodeIdentity& node, int next,
                    int max_restarts);

// The last round's end, then the job's end on this node.
void end_events(EventLog* events, const RunOutcome& outcome, const NodeIdentity& node);

}  // namespace aml

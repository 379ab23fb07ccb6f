// The run's summary beside the report on stderr: --summary-file (DESIGN §4; its schema is
// docs/reference/summary-file.schema.json), and the line that says where the time went.
#pragma once

#include <string>

#include "elastic_rounds.hpp"
#include "events/event_log.hpp"
#include "events/goodput_clock.hpp"
#include "options.hpp"
#include "supervisor/failure_summary.hpp"

namespace aml {

// --summary-file written, when asked for (its "time" from `clock`); what to say on stderr if
// it cannot be.
std::string write_summary_file(const Options& options, const RunOutcome& outcome,
                               const NodeIdentity& node, bool final, const ElasticRounds& rounds,
                               const GoodputClock& clock);

// The rendezvous stopped the job before anything started (a fixed-size job's node failed its
// health check, the nodes disagree, one did not come): the error said, --summary-file written
// with it as "start_error" and the nodes benched for it. The launcher's status: 2.
int rendezvous_failed(const Options& options, const Error& error, const NodeIdentity& node,
                      const ElasticRounds& rounds, const GoodputClock& clock);

// A stop signal came while this node waited for a round (StopWhileWaiting): the stop and end
// events, --summary-file ("stopped", exit 128+signal, no worker), the report on stderr, as
// after a stop while workers ran. The caller then ends the process.
void stopped_while_waiting(int signal, long sender_pid, const Options& options,
                           const NodeIdentity& node, const ElasticRounds& rounds,
                           const GoodputClock& clock, EventLog* events);

// The time line ("aml-launch: time: ..."), where the report says something already (a
// failure, a stop, a notice) or the job restarted; "" for a run that just succeeded, or one
// that ended at its start.
std::string time_text(const std::string& report, const RunOutcome& outcome,
                      const GoodputClock& clock);

}  // namespace aml

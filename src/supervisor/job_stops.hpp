#pragma once
// The signals that stop a job: a scheduler's TERM (Slurm, Kubernetes, Azure ML), a terminal's
// INT, HUP and QUIT. The supervisor holds them (blocked) from the moment it exists to its end,
// so that a stop is told wherever it lands, with the summary file and the stop event: while a
// rendezvous waits by StopWhileWaiting's thread, while workers run by the round's signalfd, and
// in between (its first milliseconds, a round being prepared) once one of those takes it. Never
// by the default action, which ended the launcher with no summary.
#include <signal.h>

namespace aml {

inline constexpr int kJobStops[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

// Adds the stops to `mask`.
void add_job_stops(sigset_t& mask);
// Takes them out of `mask` (a worker's: it starts as the launcher did, the stops unblocked).
void remove_job_stops(sigset_t& mask);
// Blocks them in the calling thread (and so in every thread it starts after); `before`, where
// given, takes the mask as it was.
void hold_job_stops(sigset_t* before = nullptr);

}  // namespace aml

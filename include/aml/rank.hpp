// The rank library: where this process sits in the job, from whatever the scheduler (or
// aml-launch) put in the environment. No sockets, no threads; read once, then cached.
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace aml {

// This process's view of the job. For a per-process source it is the scheduler's rank; for
// a node-level source seen without a launcher (a Kubeflow pod running the script directly,
// a plain `python train.py`) this process is the only one on its node.
struct ProcessTopology {
  Topology job;
  int rank = 0;
  int local_rank = 0;
  int local_world_size = 1;
  int world_size = 1;
  int node_rank = 0;
  bool in_training_world = true;  // false for TensorFlow `ps` and `evaluator` tasks
};

// The topology, or the error that the environment gave. Never throws.
const Result<ProcessTopology>& try_topology();
// The topology; throws std::runtime_error with the message when the environment is broken.
const ProcessTopology& topology();

// True exactly for global rank 0 of the training world (TensorFlow: the chief, or worker 0
// when there is no chief). True without any distributed environment, false when the
// environment is broken (try_topology() says why).
bool is_master();
// These return -1 when the environment is broken.
int rank();
int local_rank();
int world_size();
int local_world_size();
int node_rank();

// Tells aml-launch's hang watch (--hang-timeout) that this rank is making progress, as output
// does; `step` (-1: none) is shown with it. One atomic add in memory, no system call: call it
// every step, or more often. Does nothing outside aml-launch.
void progress(std::int64_t step = -1);

// A notice of the job's end that aml-launch handed this rank (a spot VM's preemption, planned
// maintenance, a scheduler's signal before its time limit): every rank of the job gets the
// same one within a moment, with --notice-to-workers (SIGUSR1 by default). Save a checkpoint
// and exit 0: the job ends as preempted (exit 200), not as a failure.
struct JobNotice {
  std::string kind;    // preempt, terminate, reboot, redeploy, freeze (a pause), signal
  std::string source;  // azure-scheduled-events, aws-spot, gcp-preemption, signal
  int node_rank = -1;  // the node that heard it
  std::string host;
  std::string detail;            // what the platform said, for people
  long long deadline_unix = -1;  // when that node will be gone; -1: not said
  int duration_seconds = -1;     // a freeze's length; -1: not said
};
// The notice, or nullopt while there is none: one look at the file AML_LAUNCH_NOTICE_FILE
// names (a failed open while there is none), cheap enough for every step. Outside aml-launch,
// always nullopt.
std::optional<JobNotice> notice();

}  // namespace aml

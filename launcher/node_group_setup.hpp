// How this launcher meets the other launchers of its job (DESIGN §5): whether it does, the
// group it starts, and what each round's rendezvous gives the workers.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "rendezvous/node_group.hpp"
#include "store/launchers/job_auth.hpp"

namespace aml {

bool joins_group(const Options& options, const Topology& t);

// The job's MASTER_PORT where the launch names none and the launchers meet (torchrun's
// --master-port default): every node must arrive at the same one, so it is never a local pick.
inline constexpr int kDefaultMasterPort = 29500;

// How this job's store admits its members: the secret (then removed from this process's
// environment and from `env`, so that no worker or tool inherits it), munge under Slurm, or
// none; an error for a bad secret, or for none under --require-auth in a job with a store.
Result<JobAuth> job_auth_for(const Options& options, const Topology& t, Env& env);

std::string host_name();

// The rendezvous backend asked for: --rdzv-backend, else PET_RDZV_BACKEND; etcd's members from
// --rdzv-endpoint, else PET_RDZV_ENDPOINT; how to reach them from --rdzv-conf, else
// PET_RDZV_CONF. AML_LAUNCH_ETCD_PASSWORD is removed from this process and from `env`.
Result<RendezvousBackend> rendezvous_backend_for(const Options& options, Env& env);

// `say`: what a launcher waiting for an elastic round says on stderr.
Result<std::unique_ptr<NodeGroup>> start_node_group(
    const Options& options, const LaunchPlan& plan, const PlanInputs& inputs, const JobAuth& auth,
    const RendezvousBackend& backend, std::function<void(const std::string&)> say,
    std::shared_ptr<HealthWatch> health, const std::string& machine,
    std::function<void(const BenchedNode&)> benched,
    std::function<void(const char*, const std::string&)> waits);
// A node benched, as the launcher that decided it says it (a fixed-size job's: every node that
// read the verdict): a line on stderr (elastic), and a JSON line appended to --bad-nodes-file
// (with the job's id) for the scheduler.
void record_benched(const Options& options, const LaunchPlan& plan, const BenchedNode& node);

void apply_agreement(const Agreement& agreed, const NodeGroup& group, PlanInputs& inputs);

// Whether this node's workers reach the workers' store through this launcher's relay (DESIGN
// §3): on every node of a per-node launch but this round's node 0, which serves the store.
bool relays_workers_store(const LaunchPlan& plan, const PlanInputs& inputs, const Topology& round);

}  // namespace aml

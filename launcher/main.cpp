// aml-launch: CLI -> topology -> plan -> run. Thin: every stage lives in src/.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>

#include "net/free_port.hpp"
#include "net/route_interface.hpp"
#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "supervisor/exit_status.hpp"
#include "supervisor/run_workers.hpp"
#include "topology/detect.hpp"

extern char** environ;

namespace aml {
namespace {

constexpr int kUsageError = 2;

int fail(const Error& error) {
  std::cerr << "aml-launch: error: " << error.message() << "\n";
  return kUsageError;
}

Result<PlanInputs> gather_inputs(const Options& options, const Topology& topology, const Env& env,
                                 const Machine& machine) {
  PlanInputs inputs;
  inputs.command = options.command;
  inputs.run_id = options.run_id;
  inputs.cpu_count = machine.cpu_count();
  inputs.omp_threads_set = has(env, "OMP_NUM_THREADS");
  inputs.nccl_ifname_set = has(env, "NCCL_SOCKET_IFNAME");
  inputs.gloo_ifname_set = has(env, "GLOO_SOCKET_IFNAME");
  if (inputs.run_id.empty() && topology.run_id.empty() && topology.nnodes == 1) {
    // A single node needs no agreement on the id: make one that names this launch.
    inputs.run_id = "aml-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr));
  }
  if (topology.master_port == 0) {
    auto port = free_tcp_port();
    if (!port) return port.error();
    inputs.free_port = *port;
  }
  if (topology.nnodes > 1 && !(inputs.nccl_ifname_set && inputs.gloo_ifname_set)) {
    RouteInterface route = route_interface_to(topology.master_addr);
    inputs.route_ifname = route.ifname;
    inputs.route_reason = route.reason;
  } else if (topology.nnodes > 1) {
    inputs.route_reason = "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME are already set";
  }
  return inputs;
}

std::vector<std::string> environ_with(const Env& base, const EnvList& added) {
  Env merged = base;
  for (const auto& [name, value] : added) merged[name] = value;
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (const auto& [name, value] : merged) out.push_back(name + "=" + value);
  return out;
}

void print_failure(const LaunchPlan& plan, const RunOutcome& outcome) {
  if (outcome.spawn_error) {
    std::cerr << "aml-launch: cannot start the command: " << outcome.spawn_error->message() << "\n";
  }
  if (!outcome.first_failure) return;
  const WorkerExit& failed = *outcome.first_failure;
  char host[256] = "?";
  gethostname(host, sizeof(host) - 1);
  std::cerr << "aml-launch: rank " << failed.rank << " (local rank " << failed.local_rank
            << ") on node " << plan.topology.node_rank << " (" << host << "), pid " << failed.pid
            << ", failed first: " << describe_wait_status(failed.wait_status) << "\n";
}

int run(int argc, char** argv) {
  auto parsed = parse_command_line(argc, argv);
  if (auto* exit_now = std::get_if<ExitNow>(&parsed)) return exit_now->status;
  if (auto* error = std::get_if<Error>(&parsed)) return fail(*error);
  const Options& options = std::get<Options>(parsed);

  const Env env = env_from(environ);
  const Machine machine = real_machine();
  auto topology = detect_topology(env, machine, options.overrides);
  if (!topology) return fail(topology.error());
  auto inputs = gather_inputs(options, *topology, env, machine);
  if (!inputs) return fail(inputs.error());
  const LaunchPlan plan = build_plan(*topology, *inputs);

  if (options.dry_run) {
    std::cout << (options.format == OutputFormat::json ? plan_json(plan) : plan_text(plan));
    return 0;
  }
  if (options.command.empty()) return fail(missing("command", "a command after -- (see --help)"));

  std::vector<WorkerLaunch> launches;
  for (const WorkerPlan& worker : plan.workers) {
    launches.push_back(
        {worker.rank, worker.local_rank, options.command, environ_with(env, worker.env)});
  }
  RunOutcome outcome = run_workers(launches, {options.term_timeout_seconds});
  print_failure(plan, outcome);
  return outcome.exit_code;
}

}  // namespace
}  // namespace aml

int main(int argc, char** argv) { return aml::run(argc, argv); }

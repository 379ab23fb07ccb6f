#include <fmt/format.h>

#include "plan/launch_plan.hpp"

namespace aml {

std::string plan_text(const LaunchPlan& plan) {
  const Topology& t = plan.topology;
  std::string out;
  auto line = [&out](std::string text) { out += text + "\n"; };
  line(fmt::format("source:          {} ({})", t.source, t.reason));
  line(fmt::format("launch:          {}", to_string(t.launch)));
  line(fmt::format("nodes:           {} (this is node {})", t.nnodes, t.node_rank));
  line(fmt::format("workers/node:    {}", t.nproc_per_node));
  line(fmt::format("world size:      {}", t.world_size));
  line(fmt::format("master:          {}:{} (workers' MASTER_PORT {})", t.master_addr, t.master_port,
                   plan.worker_master_port != 0
                       ? std::to_string(plan.worker_master_port)
                       : std::string(t.launch == Launch::per_process
                                         ? "picked by rank 0's launcher when the ranks' "
                                           "launchers meet; this port is their store's"
                                         : "picked by node 0 at the rendezvous; this port is the "
                                           "store's")));
  line(fmt::format("run id:          {}", plan.run_id.empty() ? "(none)" : plan.run_id));
  line(fmt::format("socket ifname:   {} ({})",
                   plan.socket_ifname.empty() ? "(not set)" : plan.socket_ifname,
                   plan.socket_ifname_reason));
  std::string command;
  for (const std::string& arg : plan.command) command += (command.empty() ? "" : " ") + arg;
  line(fmt::format("command:         {}", command.empty() ? "(none)" : command));
  for (const std::string& note : t.notes) line("note:            " + note);
  for (const WorkerPlan& worker : plan.workers) {
    line(worker.rank >= 0
             ? fmt::format("worker rank {} (local {}):", worker.rank, worker.local_rank)
             : fmt::format("worker (role {}, outside the training world):", t.role));
    for (const auto& [name, value] : worker.env) line(fmt::format("  {}={}", name, value));
  }
  return out;
}

}  // namespace aml

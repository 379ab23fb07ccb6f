#include <nlohmann/json.hpp>

#include "plan/launch_plan.hpp"
#include "topology/topology_json.hpp"

namespace aml {

std::string plan_json(const LaunchPlan& plan) {
  const Topology& t = plan.topology;
  nlohmann::ordered_json out = topology_json(t);
  // null: picked by node 0 at the rendezvous, after --dry-run has printed.
  out["worker_master_port"] = plan.worker_master_port != 0
                                  ? nlohmann::ordered_json(plan.worker_master_port)
                                  : nlohmann::ordered_json();
  out["run_id"] = plan.run_id;
  out["role"] = t.role;
  out["socket_ifname"] = plan.socket_ifname.empty() ? nlohmann::ordered_json()
                                                    : nlohmann::ordered_json(plan.socket_ifname);
  out["socket_ifname_reason"] = plan.socket_ifname_reason;
  out["notes"] = t.notes;
  out["command"] = plan.command;
  auto& workers = out["workers"] = nlohmann::ordered_json::array();
  for (const WorkerPlan& worker : plan.workers) {
    nlohmann::ordered_json env = nlohmann::ordered_json::object();
    for (const auto& [name, value] : worker.env) env[name] = value;
    workers.push_back({{"rank", worker.rank}, {"local_rank", worker.local_rank}, {"env", env}});
  }
  return out.dump(2) + "\n";
}

}  // namespace aml

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
  if (t.elastic && plan.elastic) {
    const ElasticPlan& e = *plan.elastic;
    out["elastic"] = {
        {"min_nodes", t.elastic->min},
        {"max_nodes", t.elastic->max},
        {"endpoint", t.master_addr + ":" + std::to_string(t.master_port)},
        {"serves_store", e.serves_store},
        {"serves_store_reason", e.serves_reason},
        {"last_call_seconds", e.last_call_seconds},
        {"admit_newcomers", e.admit_at_once ? "at-once" : "next-round"},
        {"max_restarts", e.max_restarts},
        {"rdzv_timeout_seconds", e.rdzv_timeout_seconds},
        {"node_timeout_seconds", e.node_timeout_seconds},
    };
  }
  out["notes"] = t.notes;
  out["command"] = plan.command;
  auto& workers = out["workers"] = nlohmann::ordered_json::array();
  for (const WorkerPlan& worker : plan.workers) {
    nlohmann::ordered_json env = nlohmann::ordered_json::object();
    for (const auto& [name, value] : worker.env) env[name] = value;
    // An elastic job's ranks are given at each round's rendezvous.
    nlohmann::ordered_json rank =
        t.elastic ? nlohmann::ordered_json() : nlohmann::ordered_json(worker.rank);
    workers.push_back({{"rank", rank}, {"local_rank", worker.local_rank}, {"env", env}});
  }
  return out.dump(2) + "\n";
}

}  // namespace aml

#include <nlohmann/json.hpp>

#include "plan/launch_plan.hpp"
#include "topology/topology_json.hpp"

namespace aml {
namespace {

nlohmann::ordered_json or_null(const std::string& text) {
  return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(text);
}

nlohmann::ordered_json rank_placement_json(const RankPlacement& p) {
  return {
      {"gpu", or_null(p.gpu)},
      {"gpu_reason", p.gpu_label},
      {"numa_node", p.numa_node ? nlohmann::ordered_json(*p.numa_node) : nlohmann::ordered_json()},
      {"cpus", or_null(cpu_list_text(p.cpus))},
      {"memory_policy", to_string(p.memory)},
      {"memory_nodes", or_null(cpu_list_text(p.memory_nodes))},
      {"threads", p.threads > 0 ? nlohmann::ordered_json(p.threads) : nlohmann::ordered_json()},
      {"nic", or_null(p.nic)},
      {"nic_port", p.nic.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(p.nic_port)},
      {"nic_reason", p.nic_reason},
      {"reason", p.why},
  };
}

}  // namespace

std::string plan_json(const LaunchPlan& plan) {
  const Topology& t = plan.topology;
  nlohmann::ordered_json out = topology_json(t);
  // null: picked by node 0 at the rendezvous, after --dry-run has printed.
  out["worker_master_port"] = plan.worker_master_port != 0
                                  ? nlohmann::ordered_json(plan.worker_master_port)
                                  : nlohmann::ordered_json();
  out["worker_store"] = {
      {"served_by", plan.worker_store.by_launcher ? "aml-launch" : "rank 0's worker"},
      {"reason", plan.worker_store.why}};
  // null: not --framework jax. The coordinator's port is null until the rendezvous picks it.
  out["jax"] =
      plan.jax ? nlohmann::ordered_json{{"coordinator_host", plan.jax->coordinator_host},
                                        {"coordinator_port",
                                         plan.jax->coordinator_port != 0
                                             ? nlohmann::ordered_json(plan.jax->coordinator_port)
                                             : nlohmann::ordered_json()},
                                        {"bind_host", plan.jax->bind_host},
                                        {"cluster_environment",
                                         plan.jax->plugin_dir + "/sitecustomize.py"},
                                        {"reason", plan.jax->why}}
               : nlohmann::ordered_json();
  out["run_id"] = plan.run_id;
  out["role"] = t.role;
  out["socket_ifname"] = plan.socket_ifname.empty() ? nlohmann::ordered_json()
                                                    : nlohmann::ordered_json(plan.socket_ifname);
  out["socket_ifname_reason"] = plan.socket_ifname_reason;
  // null: no store (one launcher alone).
  out["auth"] = plan.store_auth ? nlohmann::ordered_json{{"mode", plan.store_auth->mode},
                                                         {"about", plan.store_auth->about}}
                                : nlohmann::ordered_json();
  // null: no rendezvous (one launcher alone).
  out["rendezvous"] =
      plan.rendezvous
          ? nlohmann::ordered_json{{"backend", plan.rendezvous->backend},
                                   {"endpoints", plan.rendezvous->endpoints},
                                   {"loss", plan.rendezvous->loss},
                                   {"access",
                                    plan.rendezvous->access.empty()
                                        ? nlohmann::ordered_json()
                                        : nlohmann::ordered_json(plan.rendezvous->access)}}
          : nlohmann::ordered_json();
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
  if (plan.placement) {
    out["placement"] = {
        {"bind", to_string(plan.placement->applied)},
        {"requested", to_string(plan.placement->requested)},
        {"reason", plan.placement->reason},
        {"memory_policy", to_string(plan.memory_policy)},
        {"rdma_nics", plan.placement->nics},
    };
  }
  out["notes"] = t.notes;
  out["flag_notes"] = plan.flag_notes;
  out["command"] = plan.command;
  out["program"] = {{"interpreter", or_null(plan.program.interpreter)},
                    {"about", plan.program.about}};
  out["term_timeout_seconds"] = plan.term_timeout_seconds;
  out["notices"] = {{"sources", plan.notices.sources},
                    {"why", plan.notices.why},
                    {"metadata_url", or_null(plan.notices.metadata_url)},
                    {"signal", or_null(plan.notices.signal)},
                    {"to_workers", or_null(plan.notices.to_workers)}};
  auto& workers = out["workers"] = nlohmann::ordered_json::array();
  for (const WorkerPlan& worker : plan.workers) {
    nlohmann::ordered_json env = nlohmann::ordered_json::object();
    for (const auto& [name, value] : worker.env) env[name] = value;
    // An elastic job's ranks are given at each round's rendezvous.
    nlohmann::ordered_json rank =
        t.elastic ? nlohmann::ordered_json() : nlohmann::ordered_json(worker.rank);
    nlohmann::ordered_json entry = {{"rank", rank}, {"local_rank", worker.local_rank}};
    if (worker.placement) entry["placement"] = rank_placement_json(*worker.placement);
    entry["env"] = env;
    workers.push_back(std::move(entry));
  }
  return out.dump(2) + "\n";
}

}  // namespace aml

#include <fmt/format.h>

#include "plan/launch_plan.hpp"

namespace aml {

namespace {

// An elastic job: how its nodes meet, what decides a round, and what happens when one is lost.
template <typename Line>
void elastic_lines(const LaunchPlan& plan, const Line& line) {
  const Topology& t = plan.topology;
  const ElasticPlan e = plan.elastic.value_or(ElasticPlan{});
  line(
      fmt::format("nodes:           {} to {}, elastic: node ranks and the node count are given "
                  "at each round's rendezvous",
                  t.elastic->min, t.elastic->max));
  if (plan.rendezvous && plan.rendezvous->backend == "etcd") {
    line(
        "rendezvous:      in etcd; no node serves it: each round's node 0 is whichever node the "
        "round gives rank 0, and the workers' MASTER_ADDR is its address");
  } else {
    line(fmt::format("rendezvous:      the store at {}:{}; {} ({})", t.master_addr, t.master_port,
                     e.serves_store ? "this node serves it and is node 0"
                                    : "another node serves it; this node joins",
                     e.serves_reason));
  }
  line(
      fmt::format("rounds:          a round starts with {} nodes, or with at least {} once no "
                  "node came for --rdzv-last-call {} s; nodes beyond {} wait as hot spares",
                  t.elastic->max, t.elastic->min, e.last_call_seconds, t.elastic->max));
  line(
      fmt::format("a loss:          a lost node or a failed worker ends the round on every "
                  "node; the next starts at once with the nodes left and a spare (up to "
                  "--max-restarts {}); below {} nodes the job waits --rdzv-timeout {} s, then "
                  "fails",
                  e.max_restarts, t.elastic->min, e.rdzv_timeout_seconds));
  line(fmt::format("newcomers:       {}",
                   e.admit_at_once ? "a node that arrives while a round runs below the most "
                                     "nodes ends that round at once (--admit-newcomers at-once)"
                                   : "a node that arrives while a round runs is admitted at the "
                                     "next round (--admit-newcomers next-round)"));
}

// "GPU 0000:17:00.0 (GPU 1 ...), NUMA node 0, CPUs 0-47, memory preferred on 0, ..."
std::string rank_placement_text(const RankPlacement& p) {
  std::string text = p.gpu.empty() ? p.gpu_label : "GPU " + p.gpu + " (" + p.gpu_label + ")";
  if (p.cpus.empty()) {
    text += text.empty() ? "CPUs as the launcher's" : "; CPUs as the launcher's";
  } else {
    text += fmt::format("; CPUs {} ({}); memory {}", cpu_list_text(p.cpus), p.why,
                        p.memory == MemoryPolicy::none ? std::string("as the launcher's")
                                                       : to_string(p.memory) + " on NUMA node " +
                                                             cpu_list_text(p.memory_nodes));
    text += fmt::format("; {} thread(s)", p.threads);
  }
  if (!p.nic.empty()) text += fmt::format("; NIC {} port {} ({})", p.nic, p.nic_port, p.nic_reason);
  return text;
}

}  // namespace

std::string plan_text(const LaunchPlan& plan) {
  const Topology& t = plan.topology;
  std::string out;
  auto line = [&out](std::string text) { out += text + "\n"; };
  line(fmt::format("source:          {} ({})", t.source, t.reason));
  line(fmt::format("launch:          {}", to_string(t.launch)));
  if (t.elastic) {
    elastic_lines(plan, line);
  } else {
    line(fmt::format("nodes:           {} (this is node {})", t.nnodes, t.node_rank));
  }
  line(fmt::format("workers/node:    {}", t.nproc_per_node));
  line(fmt::format("world size:      {}", t.elastic
                                              ? std::string("given at each round's rendezvous")
                                              : std::to_string(t.world_size)));
  if (plan.rendezvous && plan.rendezvous->backend == "etcd") {
    line(
        "master:          each round's node 0, given at the rendezvous (the workers' MASTER_ADDR, "
        "MASTER_PORT and store)");
  } else {
    line(fmt::format("master:          {}:{} (workers' MASTER_PORT {})", t.master_addr,
                     t.master_port,
                     plan.worker_master_port != 0
                         ? std::to_string(plan.worker_master_port)
                         : std::string(!plan.worker_master_addr.empty()
                                           ? "this node's relay's, picked at each round"
                                           : "for rank 0's worker's store, picked by " +
                                                 std::string(t.launch == Launch::per_process
                                                                 ? "rank 0's launcher"
                                                                 : "node 0") +
                                                 " at the rendezvous")));
  }
  line(fmt::format("workers' store:  {} ({})",
                   plan.worker_store.by_launcher ? "served by aml-launch" : "rank 0's worker",
                   plan.worker_store.why));
  if (plan.jax) {
    line(
        fmt::format("jax:             jax.distributed.initialize() meets at {}:{} (process 0 "
                    "listens on {}); cluster environment {}/sitecustomize.py ({})",
                    plan.jax->coordinator_host,
                    plan.jax->coordinator_port != 0 ? std::to_string(plan.jax->coordinator_port)
                                                    : "(picked by node 0 at the rendezvous)",
                    plan.jax->bind_host, plan.jax->plugin_dir, plan.jax->why));
  }
  line(fmt::format("run id:          {}", plan.run_id.empty() ? "(none)" : plan.run_id));
  if (plan.rendezvous) {
    std::string where = plan.rendezvous->backend == "etcd" ? "etcd at " : "node 0's store";
    for (std::size_t i = 0; i < plan.rendezvous->endpoints.size(); ++i) {
      where += (i ? "," : "") + plan.rendezvous->endpoints[i];
    }
    line(fmt::format("rendezvous in:   {} ({}); {}", where, plan.rendezvous->backend,
                     plan.rendezvous->loss));
    if (!plan.rendezvous->access.empty()) {
      line(fmt::format("etcd access:     {}", plan.rendezvous->access));
    }
  }
  if (plan.store_auth) {
    line(fmt::format("store auth:      {}: {}", plan.store_auth->mode, plan.store_auth->about));
  }
  line(fmt::format("socket ifname:   {} ({})",
                   plan.socket_ifname.empty() ? "(not set)" : plan.socket_ifname,
                   plan.socket_ifname_reason));
  std::string command;
  for (const std::string& arg : plan.command) command += (command.empty() ? "" : " ") + arg;
  line(fmt::format("command:         {}", command.empty() ? "(none)" : command));
  if (!plan.program.about.empty()) line("program:         " + plan.program.about);
  line(fmt::format("stop grace:      {} s between SIGTERM and SIGKILL (--term-timeout)",
                   plan.term_timeout_seconds));
  {
    const NoticePlan& n = plan.notices;
    std::string sources;
    for (const std::string& source : n.sources) sources += (sources.empty() ? "" : ", ") + source;
    line("notices:         " +
         (sources.empty() ? "no metadata service (" + n.why + ")"
                          : sources + " (" + n.why + "), asked at " + n.metadata_url) +
         (n.signal.empty() ? "" : "; " + n.signal + " to the launcher is one") +
         "; the workers get " + (n.to_workers.empty() ? "no signal" : n.to_workers) +
         " and AML_LAUNCH_NOTICE_FILE");
  }
  if (plan.placement) {
    line(fmt::format("placement:       {} ({}); memory policy {}",
                     to_string(plan.placement->applied), plan.placement->reason,
                     to_string(plan.memory_policy)));
    std::string nics;
    for (const std::string& nic : plan.placement->nics) nics += (nics.empty() ? "" : ", ") + nic;
    if (!nics.empty()) line("rdma nics:       " + nics + " (NCCL chooses among these itself)");
  }
  for (const std::string& note : t.notes) line("note:            " + note);
  for (const std::string& note : plan.flag_notes) line("flag note:       " + note);
  for (const WorkerPlan& worker : plan.workers) {
    line(t.elastic ? fmt::format("worker local rank {} (its rank given at each round):",
                                 worker.local_rank)
         : worker.rank >= 0
             ? fmt::format("worker rank {} (local {}):", worker.rank, worker.local_rank)
             : fmt::format("worker (role {}, outside the training world):", t.role));
    if (worker.placement) line("  placement: " + rank_placement_text(*worker.placement));
    for (const auto& [name, value] : worker.env) line(fmt::format("  {}={}", name, value));
  }
  return out;
}

}  // namespace aml

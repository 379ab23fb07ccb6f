// Source 3: TF_CONFIG with a task (TensorFlow MultiWorkerMirroredStrategy, Azure ML, TFJob).
#include <algorithm>

#include "topology/host_port.hpp"
#include "topology/sources.hpp"
#include "topology/tf_config.hpp"

namespace aml {
namespace {

bool present(const Env& env) {
  const std::string* text = find(env, "TF_CONFIG");
  return text != nullptr && tf_config_has_task(*text);
}

Error bad(const std::string& text, const std::string& why) {
  return invalid("TF_CONFIG", text, why);
}

Result<Detected> read(const DetectContext& ctx) {
  const std::string& text = *find(ctx.env, "TF_CONFIG");
  auto parsed = parse_tf_config(text);
  if (!parsed) return parsed.error();
  const TfConfig& config = *parsed;
  if (config.tasks("chief") && config.tasks("master")) {
    return bad(text, "either a \"chief\" or a legacy \"master\" task, not both");
  }
  const std::vector<std::string> world = config.training_world();
  if (world.empty()) return bad(text, "a cluster with at least one chief or worker task");
  const std::size_t leaders =
      world.size() - (config.tasks("worker") ? config.tasks("worker")->size() : 0);

  Topology t;
  t.source = "tf-config";
  t.launch = Launch::per_process;
  t.role = config.task_type;
  t.world_size = static_cast<int>(world.size());
  const std::string& type = config.task_type;
  const auto* own_list = config.tasks(type);
  if (type == "chief" || type == "master" || type == "worker") {
    if (own_list == nullptr || static_cast<std::size_t>(config.task_index) >= own_list->size()) {
      return bad(text, "task.index below the number of \"" + type + "\" tasks in the cluster");
    }
    t.rank = config.task_index + (type == "worker" ? static_cast<int>(leaders) : 0);
  } else if (type == "ps" || type == "evaluator") {
    t.notes.push_back("task type \"" + type +
                      "\" is outside the training world: no rank, not the master");
  } else {
    return bad(text, "task.type one of chief, master, worker, ps, evaluator");
  }

  // Nodes are the distinct hosts of the training world, in rank order.
  std::vector<std::string> hosts;
  for (const std::string& address : world) {
    auto hp = split_host_port("TF_CONFIG", address);
    if (!hp) return bad(text, "cluster addresses as host:port, not \"" + address + "\"");
    hosts.push_back(hp->host);
  }
  std::vector<std::string> distinct;
  for (const std::string& host : hosts) {
    if (std::find(distinct.begin(), distinct.end(), host) == distinct.end())
      distinct.push_back(host);
  }
  t.nnodes = static_cast<int>(distinct.size());
  if (t.rank >= 0) {
    const std::string& own_host = hosts[t.rank];
    t.node_rank =
        static_cast<int>(std::find(distinct.begin(), distinct.end(), own_host) - distinct.begin());
    t.nproc_per_node = static_cast<int>(std::count(hosts.begin(), hosts.end(), own_host));
    t.local_rank = static_cast<int>(std::count(hosts.begin(), hosts.begin() + t.rank, own_host));
  }
  auto master = split_host_port("TF_CONFIG", world.front());
  if (!master || !master->port) {
    return bad(text, "the chief (or worker 0) address as host:port, not \"" + world.front() + "\"");
  }
  t.master_addr = master->host;
  t.master_port = *master->port;
  t.reason = "TF_CONFIG names task " + type + ":" + std::to_string(config.task_index);
  return Detected{std::move(t), "TF_CONFIG"};
}

}  // namespace

const Source kTfConfigSource{"tf-config", present, read};

}  // namespace aml

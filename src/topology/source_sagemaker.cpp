// Source 10: Amazon SageMaker training (SM_HOSTS, SM_CURRENT_HOST, SM_NUM_GPUS).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "topology/host_port.hpp"
#include "topology/master.hpp"
#include "topology/numbers.hpp"
#include "topology/sources.hpp"

namespace aml {
namespace {

bool present(const Env& env) { return has(env, "SM_HOSTS") && has(env, "SM_CURRENT_HOST"); }

Result<std::vector<std::string>> parse_hosts(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return invalid("SM_HOSTS", text,
                   "a JSON list of host names such as [\"algo-1\", \"algo-2\"] (" + why + ")");
  };
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return bad("not valid JSON");
  if (!json.is_array() || json.empty()) return bad("not a non-empty list");
  std::vector<std::string> hosts;
  for (const auto& host : json) {
    if (!host.is_string()) return bad("a non-string entry");
    auto checked = split_host_port("SM_HOSTS", host.get<std::string>());
    if (!checked || checked->port)
      return bad("\"" + host.get<std::string>() + "\" is not a host name");
    if (std::find(hosts.begin(), hosts.end(), checked->host) != hosts.end()) {
      return bad("\"" + checked->host + "\" appears twice");
    }
    hosts.push_back(checked->host);
  }
  return hosts;
}

Result<Detected> read(const DetectContext& ctx) {
  const Env& env = ctx.env;
  auto hosts = parse_hosts(*find(env, "SM_HOSTS"));
  if (!hosts) return hosts.error();
  const std::string& current = *find(env, "SM_CURRENT_HOST");
  auto it = std::find(hosts->begin(), hosts->end(), current);
  if (it == hosts->end()) {
    return invalid("SM_CURRENT_HOST", current,
                   "one of the hosts in SM_HOSTS=" + *find(env, "SM_HOSTS"));
  }
  auto gpus = optional_number(env, "SM_NUM_GPUS", 0, kMaxCount);
  if (!gpus) return gpus.error();
  auto port = read_port_or(env, "MASTER_PORT", kTorchDefaultPort);
  if (!port) return port.error();
  Topology t;
  t.source = "sagemaker";
  t.launch = Launch::per_node;
  t.nnodes = static_cast<int>(hosts->size());
  t.node_rank = static_cast<int>(it - hosts->begin());
  t.nproc_per_node = std::max(1, gpus->value_or(1));  // a CPU instance has SM_NUM_GPUS=0
  t.world_size = t.nnodes * t.nproc_per_node;
  t.master_addr = hosts->front();
  t.master_port = *port;
  t.reason = "SM_HOSTS and SM_CURRENT_HOST are set: a SageMaker training job";
  if (const std::string* job = find(env, "TRAINING_JOB_NAME")) t.run_id = *job;
  return Detected{std::move(t), "SM_HOSTS"};
}

}  // namespace

const Source kSageMakerSource{"sagemaker", present, read};

}  // namespace aml

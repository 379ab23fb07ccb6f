#include "topology/topology_json.hpp"

namespace aml {

nlohmann::ordered_json topology_json(const Topology& t) {
  nlohmann::ordered_json out;
  out["source"] = t.source;
  out["reason"] = t.reason;
  out["launch"] = std::string(to_string(t.launch));
  // An elastic job's size and this node's rank are known only at each round's rendezvous.
  const auto known = [&t](int value) {
    return t.elastic ? nlohmann::ordered_json() : nlohmann::ordered_json(value);
  };
  out["nnodes"] = known(t.nnodes);
  out["node_rank"] = known(t.node_rank);
  out["nproc_per_node"] = t.nproc_per_node;
  out["world_size"] = known(t.world_size);
  out["master_addr"] = t.master_addr;
  out["master_port"] = t.master_port;
  out["restart_count"] = t.restart_count;
  return out;
}

}  // namespace aml

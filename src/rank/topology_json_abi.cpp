// aml_topology_json(): the topology for callers that read JSON (the Python package).
#include <aml/rank.h>

#include <aml/rank.hpp>
#include <string>

#include "topology/topology_json.hpp"

extern "C" const char* aml_topology_json(void) {
  static const std::string text = [] {
    const auto& result = aml::try_topology();
    if (!result) return std::string();
    const aml::ProcessTopology& t = *result;
    nlohmann::ordered_json out = aml::topology_json(t.job);
    out["run_id"] = t.job.run_id;
    out["role"] = t.job.role;
    out["rank"] = t.rank;
    out["local_rank"] = t.local_rank;
    out["local_world_size"] = t.local_world_size;
    out["in_training_world"] = t.in_training_world;
    out["is_master"] = aml::is_master();
    return out.dump();
  }();
  return text.empty() ? nullptr : text.c_str();
}

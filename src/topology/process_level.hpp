// Shared checks for sources where the scheduler started every rank (per-process sources).
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "topology/env.hpp"

namespace aml {

// A number and the variable it came from, so that a check names the right variable.
struct Field {
  int value = 0;
  std::string_view variable;
};

struct ProcessFields {
  Field rank;
  Field world_size;
  Field local_rank;
  Field local_world_size;
  std::optional<Field> node_rank;  // when absent: rank / local_world_size (ranks by slot)
  std::optional<Field> nnodes;     // when absent: world_size / local_world_size
};

// Checks rank < world, local rank < local world, the node count and the node rank against
// each other, and fills a per-process Topology.
Result<Topology> process_level_topology(const ProcessFields& fields, std::string source);

// The names of the four per-process variables of one scheduler.
struct ProcessVariables {
  std::string_view rank, world_size, local_rank, local_world_size;
};

// Reads all four (required; sizes at least 1); node rank and node count are left empty.
Result<ProcessFields> read_process_fields(const Env& env, const ProcessVariables& names);

// Reads `variable` as a Field (required, or optional).
Result<Field> required_field(const Env& env, std::string_view variable, int min);
Result<std::optional<Field>> optional_field(const Env& env, std::string_view variable, int min);

}  // namespace aml

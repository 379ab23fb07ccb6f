// One topology source of DESIGN §2: when it is present, and how its variables are read.
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "topology/env.hpp"

namespace aml {

// Explicit CLI flags; each one overrides what was detected.
struct Overrides {
  std::optional<int> nnodes = {};
  std::optional<NodeRange> nnodes_range = {};  // --nnodes MIN:MAX
  std::optional<int> node_rank = {};
  std::optional<int> nproc_per_node = {};  // a number given, or counted from auto/gpu/cpu
  // nproc_per_node was counted (--nproc-per-node auto, gpu, cpu): where the scheduler started
  // several processes on this node they are its workers already, and the count is not applied.
  bool nproc_counted = false;
  std::optional<std::string> master_addr = {};
  std::optional<int> master_port = {};
  bool free_master_port = false;  // port 0 asked for: a free one on this host
  bool standalone = false;        // --standalone: one node here, whatever the scheduler set
};

struct DetectContext {
  const Env& env;
  const Machine& machine;
  const Overrides& overrides;
};

// What a source read, before the launch rule and the overrides.
struct Detected {
  Topology topology;
  // The variables that could have named node 0, for the error when a multi-node job names none.
  std::string master_variables = "MASTER_ADDR";
  // Refused unless the flags name the nodes (--nnodes): what this source saw is most likely a
  // mistake (a multi-node Slurm allocation outside any step).
  std::optional<Error> unless_nnodes_given = std::nullopt;
};

struct Source {
  std::string_view id;
  bool (*present)(const Env& env);
  Result<Detected> (*read)(const DetectContext& context);
};

// Every source, first match wins (DESIGN §2 table order).
std::span<const Source> all_sources();

}  // namespace aml

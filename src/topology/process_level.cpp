#include "topology/process_level.hpp"

#include "topology/numbers.hpp"

namespace aml {
namespace {

std::string named(const Field& field) {
  return std::string(field.variable) + "=" + std::to_string(field.value);
}

Error wrong(const Field& field, const std::string& expected) {
  return invalid(std::string(field.variable), std::to_string(field.value), expected);
}

}  // namespace

Result<Field> required_field(const Env& env, std::string_view variable, int min) {
  auto value = require_number(env, variable, min, kMaxCount);
  if (!value) return value.error();
  return Field{*value, variable};
}

Result<std::optional<Field>> optional_field(const Env& env, std::string_view variable, int min) {
  auto value = optional_number(env, variable, min, kMaxCount);
  if (!value) return value.error();
  if (!*value) return std::optional<Field>();
  return std::optional<Field>(Field{**value, variable});
}

Result<Topology> process_level_topology(const ProcessFields& f, std::string source) {
  if (f.rank.value >= f.world_size.value) {
    return wrong(f.rank, "a rank below " + named(f.world_size));
  }
  if (f.local_world_size.value > f.world_size.value) {
    return wrong(f.local_world_size, "at most " + named(f.world_size));
  }
  if (f.local_rank.value >= f.local_world_size.value) {
    return wrong(f.local_rank, "a local rank below " + named(f.local_world_size));
  }
  Topology t;
  t.source = std::move(source);
  t.launch = Launch::per_process;
  t.rank = f.rank.value;
  t.local_rank = f.local_rank.value;
  t.world_size = f.world_size.value;
  t.nproc_per_node = f.local_world_size.value;
  if (f.nnodes) {
    t.nnodes = f.nnodes->value;
    if (t.nnodes > t.world_size)
      return wrong(*f.nnodes, "at most " + named(f.world_size) + " nodes");
  } else {
    if (f.world_size.value % f.local_world_size.value != 0) {
      return wrong(f.world_size, "a multiple of " + named(f.local_world_size) +
                                     " (the same number of processes on every node)");
    }
    t.nnodes = f.world_size.value / f.local_world_size.value;
  }
  if (f.node_rank) {
    t.node_rank = f.node_rank->value;
    if (t.node_rank >= t.nnodes) {
      return wrong(*f.node_rank, "a node rank below the node count " + std::to_string(t.nnodes));
    }
  } else {
    t.node_rank = f.rank.value / f.local_world_size.value;
    if (f.rank.value % f.local_world_size.value != f.local_rank.value) {
      t.notes.push_back("ranks are not placed by slot (" + named(f.rank) + " is not node * " +
                        std::to_string(f.local_world_size.value) + " + " + named(f.local_rank) +
                        "): NODE_RANK is taken as rank / local size");
    }
  }
  return t;
}

Result<ProcessFields> read_process_fields(const Env& env, const ProcessVariables& names) {
  ProcessFields f;
  const std::pair<Field*, std::pair<std::string_view, int>> wanted[] = {
      {&f.rank, {names.rank, 0}},
      {&f.world_size, {names.world_size, 1}},
      {&f.local_rank, {names.local_rank, 0}},
      {&f.local_world_size, {names.local_world_size, 1}},
  };
  for (const auto& [field, spec] : wanted) {
    auto value = required_field(env, spec.first, spec.second);
    if (!value) return value.error();
    *field = *value;
  }
  return f;
}

}  // namespace aml

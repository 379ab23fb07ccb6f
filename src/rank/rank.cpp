// The rank library: detection over this process's environment, once.
#include <aml/rank.h>
#include <unistd.h>  // environ

#include <aml/rank.hpp>
#include <stdexcept>

#include "rank/process_view.hpp"
#include "topology/detect.hpp"

namespace aml {

const Result<ProcessTopology>& try_topology() {
  // Read once: the environment of a running process is not expected to change its job.
  static const Result<ProcessTopology> cached = []() -> Result<ProcessTopology> {
    auto job = detect_topology(env_from(environ), real_machine());
    if (!job) return job.error();
    return process_view(*job);
  }();
  return cached;
}

const ProcessTopology& topology() {
  const auto& result = try_topology();
  if (!result) throw std::runtime_error("aml: " + result.error().message());
  return *result;
}

namespace {

template <class Field>
int field_or_minus_one(Field field) {
  const auto& result = try_topology();
  return result ? field(*result) : -1;
}

}  // namespace

bool is_master() {
  const auto& t = try_topology();
  return t && t->in_training_world && t->rank == 0;
}
int rank() {
  return field_or_minus_one([](const ProcessTopology& t) { return t.rank; });
}
int local_rank() {
  return field_or_minus_one([](const ProcessTopology& t) { return t.local_rank; });
}
int world_size() {
  return field_or_minus_one([](const ProcessTopology& t) { return t.world_size; });
}
int local_world_size() {
  return field_or_minus_one([](const ProcessTopology& t) { return t.local_world_size; });
}
int node_rank() {
  return field_or_minus_one([](const ProcessTopology& t) { return t.node_rank; });
}

}  // namespace aml

extern "C" {

int aml_is_master(void) { return aml::is_master() ? 1 : 0; }
int aml_rank(void) { return aml::rank(); }
int aml_local_rank(void) { return aml::local_rank(); }
int aml_world_size(void) { return aml::world_size(); }
int aml_local_world_size(void) { return aml::local_world_size(); }
int aml_node_rank(void) { return aml::node_rank(); }

const char* aml_source(void) {
  const auto& t = aml::try_topology();
  return t ? t->job.source.c_str() : "";
}

const char* aml_topology_error(void) {
  static const std::string message = [] {
    const auto& t = aml::try_topology();
    return t ? std::string() : "aml: " + t.error().message();
  }();
  return message.empty() ? nullptr : message.c_str();
}

}  // extern "C"

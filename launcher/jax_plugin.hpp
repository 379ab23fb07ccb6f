// --framework jax (DESIGN §3): the cluster environment that makes `jax.distributed.initialize()`
// with no arguments see the launcher's job (python/aml_launch/jax_cluster.py), written where
// the workers' Python runs it at start (their PYTHONPATH's sitecustomize).
#pragma once

#include <aml/error.hpp>
#include <string>

namespace aml {

extern const char* const kJaxClusterSource;

// The folder it is written to: one a user and version, under TMPDIR (else /tmp).
std::string jax_plugin_dir();

// Writes it there (once; an existing copy is replaced whole, never left half-written).
Result<std::string> write_jax_plugin();

}  // namespace aml

// Reading node 0's address and the rendezvous port.
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "topology/env.hpp"

namespace aml {

// A host name or address from `variable`; nullopt when unset. With port_allowed a
// "host:port" value gives its host (the port is ignored); without, a port is an error.
Result<std::optional<std::string>> read_host(const Env& env, std::string_view variable,
                                             bool port_allowed = false);

// The first of `variables` that is set, read with read_host.
Result<std::optional<std::string>> first_host(const Env& env,
                                              std::initializer_list<std::string_view> variables);

// The port in `variable`, or `fallback` when it is unset.
Result<int> read_port_or(const Env& env, std::string_view variable, int fallback);

inline constexpr int kTorchDefaultPort = 29500;
// torchrun's port for a --rdzv-endpoint (PET_RDZV_ENDPOINT) that names none.
inline constexpr int kRendezvousDefaultPort = 29400;

// MASTER_ADDR (left empty when unset) and MASTER_PORT (else `fallback_port`) into `t`.
std::optional<Error> read_master_env(const Env& env, Topology& t,
                                     int fallback_port = kTorchDefaultPort);

}  // namespace aml

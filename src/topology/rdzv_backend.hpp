// Which rendezvous backend a job asked for (DESIGN §5): torchrun's --rdzv-backend and
// Kubeflow's PET_RDZV_BACKEND. c10d and static mean node 0's store; etcd and etcd-v3 mean an
// etcd cluster (its v3 API), whose members --rdzv-endpoint / PET_RDZV_ENDPOINT list.
#pragma once

#include <aml/error.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace aml {

inline constexpr int kEtcdDefaultPort = 2379;

// True for etcd or etcd-v3; false for c10d, static or ""; an error names anything else (and
// says why etcd-v2 is not taken).
Result<bool> is_etcd_backend(std::string_view variable, std::string_view name);

// "e1:2379,e2,[::1]:2379" -> {"e1:2379", "e2:2379", "[::1]:2379"}; an error names a bad one.
Result<std::vector<std::string>> etcd_endpoints(std::string_view variable, std::string_view list);
// True where the members were given as https:// (TLS); an error where only some were.
Result<bool> etcd_endpoints_use_tls(std::string_view variable, std::string_view list);

}  // namespace aml

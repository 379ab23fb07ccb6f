// The store the ranks of a communicator meet through: the launcher's (AML_LAUNCH_STORE, on a
// multi-node job), else one that rank 0 serves on MASTER_ADDR:MASTER_PORT, as torch's env://
// does with its TCPStore.
#pragma once

#include <aml/rank.hpp>
#include <aml/store.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "store/core/store_host.hpp"

namespace aml::comm {

struct JobStore {
  std::unique_ptr<StoreHost> host;    // rank 0's own store, when there is no launcher's
  std::optional<StoreClient> client;  // always set once opened
  std::string prefix;  // keys of this communicator: the same on every rank, new for each one
};

// `purpose` ("gloo", "nccl") goes into the key prefix and the errors; `name` (InitOptions)
// into the prefix.
Result<JobStore> open_job_store(const ProcessTopology& topology, const std::string& purpose,
                                const std::string& name, std::chrono::milliseconds timeout);

}  // namespace aml::comm

// The backends behind aml::comm::init(); each file is built only when its library is found.
#pragma once

#include <aml/comm.hpp>
#include <aml/rank.hpp>

namespace aml::comm {

Result<std::unique_ptr<Communicator>> start_gloo(const ProcessTopology& topology,
                                                 const InitOptions& options);
Result<std::unique_ptr<Communicator>> start_mpi(const ProcessTopology& topology,
                                                const InitOptions& options);
Result<std::unique_ptr<Communicator>> start_nccl(const ProcessTopology& topology,
                                                 const InitOptions& options);

// An error from a backend library, in the same shape as every other: what failed, where.
inline Error backend_error(std::string_view backend, std::string what, std::string detail) {
  return invalid(std::string(backend), std::move(what), std::move(detail));
}

}  // namespace aml::comm

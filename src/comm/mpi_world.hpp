// Joining MPI's world for a communicator (the mpi backend, and NCCL's MPI_Bcast of its id):
// MPI_Init_thread when nobody has yet, and a check that MPI's world is the job's.
#pragma once

#include <aml/error.hpp>
#include <aml/rank.hpp>
#include <optional>
#include <string_view>
#include <utility>

namespace aml::comm {

struct MpiApi;

// (rank, size) as mpirun / Hydra told this process, before MPI_Init; nullopt when none did.
std::optional<std::pair<int, int>> mpi_launcher_world();

// Initializes MPI if needed and checks its world against the topology. Checked before
// MPI_Init too: a per-node launch's workers inherit mpirun's variables but are not its ranks,
// and MPI_Init would abort them instead of returning. `initialized_here` tells whether the
// caller must finalize (on error, MPI is already finalized again).
Result<bool> join_mpi_world(const MpiApi& mpi, const ProcessTopology& topology,
                            std::string_view backend, bool& initialized_here);

}  // namespace aml::comm

#include "comm/mpi_world.hpp"

#include <cstdlib>
#include <string>

#include "comm/backends.hpp"
#include "comm/mpi_api.hpp"

namespace aml::comm {
namespace {

Error world_mismatch(const ProcessTopology& t, std::string_view backend, int rank, int size,
                     const std::string& seen_by) {
  return backend_error(backend, "rank " + std::to_string(rank) + " of " + std::to_string(size),
                       "MPI's world (" + seen_by +
                           ") to be the one the environment describes (rank " +
                           std::to_string(t.rank) + " of " + std::to_string(t.world_size) +
                           ", from the " + t.job.source +
                           " source); start the ranks with mpirun, not with a per-node launch of "
                           "aml-launch");
}

}  // namespace

std::optional<std::pair<int, int>> mpi_launcher_world() {
  for (auto [rank, size] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                            std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    const char* r = std::getenv(rank);
    const char* n = std::getenv(size);
    if (r != nullptr && n != nullptr) return std::pair{std::atoi(r), std::atoi(n)};
  }
  return std::nullopt;
}

Result<bool> join_mpi_world(const MpiApi& mpi, const ProcessTopology& t, std::string_view backend,
                            bool& initialized_here) {
  initialized_here = false;
  if (auto world = mpi_launcher_world();
      world && (world->first != t.rank || world->second != t.world_size)) {
    return world_mismatch(t, backend, world->first, world->second,
                          "as mpirun's environment gives it");
  }
  int initialized = 0;
  mpi.initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (mpi.init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      return backend_error(backend, "MPI_Init_thread", "to succeed");
    initialized_here = true;
  }
  mpi.comm_set_errhandler(mpi.comm_world, mpi.errors_return);
  int rank = -1, size = 0;
  mpi.comm_rank(mpi.comm_world, &rank);
  mpi.comm_size(mpi.comm_world, &size);
  if (rank != t.rank || size != t.world_size) {
    if (initialized_here) mpi.finalize();
    initialized_here = false;
    return world_mismatch(t, backend, rank, size, "as MPI_Init found it");
  }
  return true;
}

}  // namespace aml::comm

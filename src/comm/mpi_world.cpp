#include "comm/mpi_world.hpp"

#include <mpi.h>

#include <cstdlib>
#include <string>

#include "comm/backends.hpp"

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

Result<bool> join_mpi_world(const ProcessTopology& t, std::string_view backend,
                            bool& initialized_here) {
  initialized_here = false;
  if (auto world = mpi_launcher_world();
      world && (world->first != t.rank || world->second != t.world_size)) {
    return world_mismatch(t, backend, world->first, world->second,
                          "as mpirun's environment gives it");
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      return backend_error(backend, "MPI_Init_thread", "to succeed");
    initialized_here = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != t.rank || size != t.world_size) {
    if (initialized_here) MPI_Finalize();
    initialized_here = false;
    return world_mismatch(t, backend, rank, size, "as MPI_Init found it");
  }
  return true;
}

}  // namespace aml::comm

// MPI: Open MPI's own world, checked against the topology the environment describes.
#include <mpi.h>

#include <cstdlib>
#include <optional>
#include <utility>

#include "comm/backends.hpp"

namespace aml::comm {
namespace {

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::f32:
      return MPI_FLOAT;
    case DataType::f64:
      return MPI_DOUBLE;
    case DataType::i32:
      return MPI_INT32_T;
    case DataType::i64:
      return MPI_INT64_T;
  }
  return MPI_BYTE;
}

std::string mpi_message(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(const ProcessTopology& t, bool finalize)
      : Communicator(t.rank, t.world_size, t.local_rank), finalize_(finalize) {}
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalize_ && !finalized) MPI_Finalize();
  }

  Backend backend() const override { return Backend::mpi; }

  Result<bool> allreduce_sum(void* data, std::size_t count, DataType type) override {
    int rc = MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), mpi_type(type), MPI_SUM,
                           MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return backend_error("mpi", "MPI_Allreduce", mpi_message(rc));
    return true;
  }

  Result<bool> barrier() override {
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return backend_error("mpi", "MPI_Barrier", mpi_message(rc));
    return true;
  }

 private:
  bool finalize_;  // this communicator initialized MPI, so it finalizes it
};

Error world_mismatch(const ProcessTopology& t, int rank, int size, const std::string& seen_by) {
  return backend_error("mpi", "rank " + std::to_string(rank) + " of " + std::to_string(size),
                       "MPI's world (" + seen_by +
                           ") to be the one the environment describes (rank " +
                           std::to_string(t.rank) + " of " + std::to_string(t.world_size) +
                           ", from the " + t.job.source +
                           " source); start the ranks with mpirun, not with a per-node launch of "
                           "aml-launch");
}

// What the MPI launcher told this process, before MPI_Init: a per-node launch's workers
// inherit it but are not MPI ranks, and MPI_Init would abort them instead of returning.
std::optional<std::pair<int, int>> launcher_world() {
  for (auto [rank, size] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                            std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    const char* r = std::getenv(rank);
    const char* n = std::getenv(size);
    if (r != nullptr && n != nullptr) return std::pair{std::atoi(r), std::atoi(n)};
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<Communicator>> start_mpi(const ProcessTopology& t, const InitOptions&) {
  if (auto world = launcher_world();
      world && (world->first != t.rank || world->second != t.world_size)) {
    return world_mismatch(t, world->first, world->second, "as mpirun's environment gives it");
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) return backend_error("mpi", "MPI_Init_thread", mpi_message(rc));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != t.rank || size != t.world_size) {
    auto disagreement = world_mismatch(t, rank, size, "as MPI_Init found it");
    if (!initialized) MPI_Finalize();
    return disagreement;
  }
  return std::unique_ptr<Communicator>(new MpiCommunicator(t, !initialized));
}

}  // namespace aml::comm

// MPI: Open MPI's own world, checked against the topology the environment describes.
#include <mpi.h>

#include "comm/backends.hpp"
#include "comm/mpi_world.hpp"

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

}  // namespace

Result<std::unique_ptr<Communicator>> start_mpi(const ProcessTopology& t, const InitOptions&) {
  bool initialized_here = false;
  if (auto joined = join_mpi_world(t, "mpi", initialized_here); !joined) return joined.error();
  return std::unique_ptr<Communicator>(new MpiCommunicator(t, initialized_here));
}

}  // namespace aml::comm

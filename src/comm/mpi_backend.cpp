// MPI: Open MPI's own world, checked against the topology the environment describes.
// Open MPI is opened at run time (comm/mpi_api.hpp).
#include "comm/backends.hpp"
#include "comm/mpi_api.hpp"
#include "comm/mpi_world.hpp"

namespace aml::comm {
namespace {

MPI_Datatype mpi_type(const MpiApi& mpi, DataType type) {
  switch (type) {
    case DataType::f32:
      return mpi.f32;
    case DataType::f64:
      return mpi.f64;
    case DataType::i32:
      return mpi.i32;
    case DataType::i64:
      return mpi.i64;
  }
  return mpi.byte;
}

std::string mpi_message(const MpiApi& mpi, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  mpi.error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(const MpiApi& mpi, const ProcessTopology& t, bool finalize)
      : Communicator(t.rank, t.world_size, t.local_rank), mpi_(mpi), finalize_(finalize) {}
  ~MpiCommunicator() override {
    int finalized = 0;
    mpi_.finalized(&finalized);
    if (finalize_ && !finalized) mpi_.finalize();
  }

  Backend backend() const override { return Backend::mpi; }

  Result<bool> allreduce_sum(void* data, std::size_t count, DataType type) override {
    int rc = mpi_.allreduce(MPI_IN_PLACE, data, static_cast<int>(count), mpi_type(mpi_, type),
                            mpi_.sum, mpi_.comm_world);
    if (rc != MPI_SUCCESS) return backend_error("mpi", "MPI_Allreduce", mpi_message(mpi_, rc));
    return true;
  }

  Result<bool> barrier() override {
    int rc = mpi_.barrier(mpi_.comm_world);
    if (rc != MPI_SUCCESS) return backend_error("mpi", "MPI_Barrier", mpi_message(mpi_, rc));
    return true;
  }

 private:
  const MpiApi& mpi_;
  bool finalize_;  // this communicator initialized MPI, so it finalizes it
};

}  // namespace

Result<std::unique_ptr<Communicator>> start_mpi(const ProcessTopology& t, const InitOptions&) {
  auto mpi = mpi_api("mpi");
  if (!mpi) return mpi.error();
  bool initialized_here = false;
  if (auto joined = join_mpi_world(**mpi, t, "mpi", initialized_here); !joined)
    return joined.error();
  return std::unique_ptr<Communicator>(new MpiCommunicator(**mpi, t, initialized_here));
}

}  // namespace aml::comm

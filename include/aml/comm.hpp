// Communicators for user code (CMake target aml::comm): Gloo (CPU), MPI and NCCL, started from
// the rank topology that aml-launch (or any scheduler) put in the environment. Each backend is
// optional at build time; available() says which this build has. Gloo is linked in; Open MPI
// (libmpi.so.40) and NCCL (libnccl.so.2, with the driver's libcuda.so.1) are opened by init()
// when asked for, so a program linking aml::comm starts where they are not installed.
//
//   auto comm = aml::comm::init();            // backend: --backend flag, AML_COMM_BACKEND, gloo
//   if (!comm) { std::cerr << comm.error().message(); return 1; }
//   std::vector<float> grads(n, 1.0f);
//   (*comm)->allreduce_sum(grads.data(), grads.size(), aml::comm::DataType::f32);
#pragma once

#include <aml/error.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace aml::comm {

enum class Backend { gloo, mpi, nccl };
std::string_view to_string(Backend backend);
Result<Backend> parse_backend(std::string_view name);  // "gloo", "mpi" or "nccl"
bool available(Backend backend);                       // built into this library

enum class DataType { f32, f64, i32, i64 };
std::size_t size_of(DataType type);

struct InitOptions {
  std::optional<Backend> backend;  // unset: AML_COMM_BACKEND, else gloo
  // Bootstrap (meeting the other ranks, NCCL's init) gives up after this: never a hang.
  // AML_COMM_TIMEOUT (seconds) overrides it.
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  // Keeps this communicator's bootstrap keys apart from others' in the job's store (the
  // launcher's preflight uses "preflight"); every rank must give the same name.
  std::string name;
};

// One communicator over every rank of the job. Not thread-safe: one collective at a time.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual Backend backend() const = 0;
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }

  // Sums `count` elements of host memory in place across every rank (NCCL copies them to its
  // device and back; device_allreduce_sum avoids that).
  virtual Result<bool> allreduce_sum(void* data, std::size_t count, DataType type) = 0;
  virtual Result<bool> barrier() = 0;

 protected:
  Communicator(int rank, int size, int local_rank)
      : rank_(rank), size_(size), local_rank_(local_rank) {}

 private:
  int rank_;
  int size_;
  int local_rank_;
};

// Joins every other rank of the job. The error names what went wrong and where: a rank that
// did not come, an MPI world that disagrees with the environment, no usable GPU for NCCL, a
// library the backend needs that this machine lacks (AML_MPI_LIBRARY, AML_NCCL_LIBRARY and
// AML_CUDA_DRIVER_LIBRARY name other files).
Result<std::unique_ptr<Communicator>> init(const InitOptions& options = {});

}  // namespace aml::comm

// NCCL: rank 0's unique id travels through the store; the init is non-blocking and polled
// against the timeout, and aborted on error or timeout: never a hang.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <optional>
#include <thread>
#include <utility>
#if AML_COMM_WITH_MPI
#include <mpi.h>

#include "comm/mpi_world.hpp"
#endif

#include "comm/backends.hpp"
#include "comm/job_store.hpp"

namespace aml::comm {
namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t nccl_type(DataType type) {
  switch (type) {
    case DataType::f32:
      return ncclFloat32;
    case DataType::f64:
      return ncclFloat64;
    case DataType::i32:
      return ncclInt32;
    case DataType::i64:
      return ncclInt64;
  }
  return ncclInt8;
}

// Waits for a non-blocking NCCL call on `comm` to finish; aborts the communicator on error
// or timeout.
Result<bool> settle(ncclComm_t comm, ncclResult_t started, const std::string& what,
                    std::chrono::milliseconds timeout) {
  ncclResult_t state = started;
  const auto deadline = Clock::now() + timeout;
  while (state == ncclInProgress) {
    if (Clock::now() >= deadline) {
      ncclCommAbort(comm);
      return backend_error("nccl", what,
                           "to finish within " + std::to_string(timeout.count()) +
                               " ms (aborted: a rank did not join, or the network is cut)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ncclCommGetAsyncError(comm, &state);
  }
  if (state != ncclSuccess) {
    std::string detail = std::string(ncclGetErrorString(state)) + ": " + ncclGetLastError(comm);
    ncclCommAbort(comm);
    return backend_error("nccl", what, "to succeed (" + detail + ")");
  }
  return true;
}

// Where rank 0's unique id comes from: the store, or MPI_Bcast when the ranks are MPI's own
// (under mpirun, with no launcher's store), as nccl-tests do.
struct IdExchange {
  std::optional<JobStore> store;      // kept: rank 0 may be serving it
  bool mpi_initialized_here = false;  // then MPI is finalized with this, on every path
  std::string how;                    // "the store" or "MPI_Bcast", for messages

  IdExchange() = default;
  IdExchange(IdExchange&& other) noexcept
      : store(std::move(other.store)),
        mpi_initialized_here(std::exchange(other.mpi_initialized_here, false)),
        how(std::move(other.how)) {}
  IdExchange& operator=(IdExchange&&) = delete;
  ~IdExchange() {
#if AML_COMM_WITH_MPI
    if (mpi_initialized_here) MPI_Finalize();
#endif
  }
};

#if AML_COMM_WITH_MPI
bool under_mpi_launcher() {
  return mpi_launcher_world() && std::getenv("AML_LAUNCH_STORE") == nullptr;
}

Result<bool> exchange_by_mpi(const ProcessTopology& t, ncclUniqueId& id, IdExchange& exchange) {
  auto joined = join_mpi_world(t, "nccl", exchange.mpi_initialized_here);
  if (!joined) return joined;
  // A failed ncclGetUniqueId on rank 0 still broadcasts (zeros): the others must not hang,
  // and NCCL's init then fails on every rank.
  if (t.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) id = ncclUniqueId{};
  MPI_Bcast(id.internal, sizeof(id.internal), MPI_BYTE, 0, MPI_COMM_WORLD);
  exchange.how = "MPI_Bcast";
  return true;
}
#endif

Result<bool> exchange_by_store(const ProcessTopology& t, const InitOptions& options,
                               ncclUniqueId& id, IdExchange& exchange) {
  auto store = open_job_store(t, "nccl", options.name, options.timeout);
  if (!store) return store.error();
  StoreClient& client = *store->client;
  const std::string where =
      "rank " + std::to_string(t.rank) + " of " + std::to_string(t.world_size);
  if (t.rank == 0) {
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
      return backend_error("nccl", "ncclGetUniqueId", ncclGetErrorString(r));
    auto set = client.set(store->prefix + "id", std::string_view(id.internal, sizeof(id.internal)));
    if (!set) return set.error();
  } else {
    auto got = client.get(store->prefix + "id", options.timeout);
    if (!got) return got.error();
    if (!*got || (*got)->size() != sizeof(id.internal))
      return backend_error("nccl", where, "rank 0's unique id through the store in time");
    std::copy((*got)->begin(), (*got)->end(), id.internal);
  }
  // Rank 0 serves the store when there is no launcher's: it stays until everybody has the id,
  // whatever happens next.
  (void)client.set(store->prefix + "has-id/" + std::to_string(t.rank), "1");
  if (t.rank == 0) {
    std::vector<std::string> keys;
    for (int r = 0; r < t.world_size; ++r)
      keys.push_back(store->prefix + "has-id/" + std::to_string(r));
    (void)client.wait(keys, options.timeout);
  }
  exchange.store.emplace(std::move(*store));
  exchange.how = "the store";
  return true;
}

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const ProcessTopology& t, IdExchange exchange, ncclComm_t comm,
                   cudaStream_t stream, std::chrono::milliseconds timeout)
      : Communicator(t.rank, t.world_size, t.local_rank),
        exchange_(std::move(exchange)),
        comm_(comm),
        stream_(stream),
        timeout_(timeout) {}
  ~NcclCommunicator() override {
    if (device_) cudaFree(device_);
    ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }

  Backend backend() const override { return Backend::nccl; }

  Result<bool> allreduce_sum(void* data, std::size_t count, DataType type) override {
    const std::size_t bytes = count * size_of(type);
    if (bytes > device_bytes_) {
      if (device_) cudaFree(device_);
      device_ = nullptr;
      device_bytes_ = 0;
      if (cudaError_t e = cudaMalloc(&device_, bytes); e != cudaSuccess)
        return backend_error("nccl", "cudaMalloc", cudaGetErrorString(e));
      device_bytes_ = bytes;
    }
    cudaMemcpyAsync(device_, data, bytes, cudaMemcpyHostToDevice, stream_);
    auto reduced = settle(
        comm_, ncclAllReduce(device_, device_, count, nccl_type(type), ncclSum, comm_, stream_),
        "ncclAllReduce", timeout_);
    if (!reduced) return reduced;
    cudaMemcpyAsync(data, device_, bytes, cudaMemcpyDeviceToHost, stream_);
    if (cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess)
      return backend_error("nccl", "cudaStreamSynchronize", cudaGetErrorString(e));
    return true;
  }

  Result<bool> barrier() override {
    int one = 1;
    return allreduce_sum(&one, 1, DataType::i32);
  }

 private:
  IdExchange exchange_;  // outlives the NCCL communicator (destroyed last)
  ncclComm_t comm_;
  cudaStream_t stream_;
  std::chrono::milliseconds timeout_;
  void* device_ = nullptr;
  std::size_t device_bytes_ = 0;
};

}  // namespace

Result<std::unique_ptr<Communicator>> start_nccl(const ProcessTopology& t,
                                                 const InitOptions& options) {
  const std::string where =
      "rank " + std::to_string(t.rank) + " of " + std::to_string(t.world_size);
  ncclUniqueId id{};
  IdExchange exchange;
#if AML_COMM_WITH_MPI
  auto exchanged = under_mpi_launcher() ? exchange_by_mpi(t, id, exchange)
                                        : exchange_by_store(t, options, id, exchange);
#else
  auto exchanged = exchange_by_store(t, options, id, exchange);
#endif
  if (!exchanged) return exchanged.error();
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    return backend_error("nccl", where,
                         std::string("a usable GPU (no usable GPU / driver: cudaGetDeviceCount: ") +
                             (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") +
                             "; the unique id had arrived through " + exchange.how + ")");
  }
  if (cudaError_t e = cudaSetDevice(t.local_rank % devices); e != cudaSuccess)
    return backend_error("nccl", "cudaSetDevice", cudaGetErrorString(e));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t started = ncclCommInitRankConfig(&comm, t.world_size, id, t.rank, &config);
  if (started != ncclSuccess && started != ncclInProgress) {
    if (comm) ncclCommAbort(comm);
    return backend_error("nccl", "ncclCommInitRankConfig", ncclGetErrorString(started));
  }
  auto joined = settle(comm, started, "ncclCommInitRankConfig on " + where, options.timeout);
  if (!joined) return joined.error();
  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess) {
    ncclCommAbort(comm);
    return backend_error("nccl", "cudaStreamCreate", cudaGetErrorString(e));
  }
  return std::unique_ptr<Communicator>(
      new NcclCommunicator(t, std::move(exchange), comm, stream, options.timeout));
}

}  // namespace aml::comm

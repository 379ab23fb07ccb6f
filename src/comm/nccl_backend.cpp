// NCCL: rank 0's unique id travels through the store; the init is non-blocking and polled
// against the timeout, and aborted on error or timeout: never a hang.
#include <cuda_runtime.h>
#include <nccl.h>

#include <thread>

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

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const ProcessTopology& t, JobStore store, ncclComm_t comm, cudaStream_t stream,
                   std::chrono::milliseconds timeout)
      : Communicator(t.rank, t.world_size, t.local_rank),
        store_(std::move(store)),
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
  JobStore store_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  std::chrono::milliseconds timeout_;
  void* device_ = nullptr;
  std::size_t device_bytes_ = 0;
};

}  // namespace

Result<std::unique_ptr<Communicator>> start_nccl(const ProcessTopology& t,
                                                 const InitOptions& options) {
  auto store = open_job_store(t, "nccl", options.name, options.timeout);
  if (!store) return store.error();
  StoreClient& client = *store->client;
  const std::string where =
      "rank " + std::to_string(t.rank) + " of " + std::to_string(t.world_size);
  ncclUniqueId id;
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
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    return backend_error("nccl", where,
                         std::string("a usable GPU (no usable GPU / driver: cudaGetDeviceCount: ") +
                             (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") +
                             "; the unique id had arrived through the store)");
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
      new NcclCommunicator(t, std::move(*store), comm, stream, options.timeout));
}

}  // namespace aml::comm

// NCCL: rank 0's unique id travels through the store; the init is non-blocking and polled
// against the timeout, and aborted on error or timeout: never a hang. NCCL and the GPU driver
// are opened at run time (comm/nccl_api.hpp).
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#if AML_COMM_WITH_MPI
#include "comm/mpi_api.hpp"
#include "comm/mpi_world.hpp"
#endif

#include "comm/backends.hpp"
#include "comm/job_store.hpp"
#include "comm/nccl_api.hpp"

namespace aml::comm {
struct MpiApi;
namespace {

using Clock = std::chrono::steady_clock;

std::string where_in(const ProcessTopology& t) {
  return "rank " + std::to_string(t.rank) + " of " + std::to_string(t.world_size);
}

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
Result<bool> settle(const NcclApi& nccl, ncclComm_t comm, ncclResult_t started,
                    const std::string& what, std::chrono::milliseconds timeout) {
  ncclResult_t state = started;
  const auto deadline = Clock::now() + timeout;
  while (state == ncclInProgress) {
    if (Clock::now() >= deadline) {
      nccl.comm_abort(comm);
      return backend_error("nccl", what,
                           "to finish within " + std::to_string(timeout.count()) +
                               " ms (aborted: a rank did not join, or the network is cut)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    nccl.comm_get_async_error(comm, &state);
  }
  if (state != ncclSuccess) {
    std::string detail =
        std::string(nccl.get_error_string(state)) + ": " + nccl.get_last_error(comm);
    nccl.comm_abort(comm);
    return backend_error("nccl", what, "to succeed (" + detail + ")");
  }
  return true;
}

// Where rank 0's unique id comes from: the store, or MPI_Bcast when the ranks are MPI's own
// (under mpirun, with no launcher's store), as nccl-tests do.
struct IdExchange {
  std::optional<JobStore> store;  // kept: rank 0 may be serving it
  std::string how;                // "the store" or "MPI_Bcast", for messages
  // MPI, when this exchange initialized it: finalized with it (first), on every path.
  std::unique_ptr<const MpiApi, void (*)(const MpiApi*)> mpi_initialized_here{nullptr, nullptr};
};

#if AML_COMM_WITH_MPI
bool under_mpi_launcher() {
  return mpi_launcher_world() && std::getenv("AML_LAUNCH_STORE") == nullptr;
}

Result<bool> exchange_by_mpi(const NcclApi& nccl, const ProcessTopology& t, ncclUniqueId& id,
                             IdExchange& exchange) {
  auto mpi = mpi_api("nccl");
  if (!mpi) return mpi.error();
  bool initialized_here = false;
  auto joined = join_mpi_world(**mpi, t, "nccl", initialized_here);
  if (!joined) return joined;
  if (initialized_here)
    exchange.mpi_initialized_here = {*mpi, [](const MpiApi* api) { api->finalize(); }};
  // A failed ncclGetUniqueId on rank 0 still broadcasts (zeros): the others must not hang,
  // and NCCL's init then fails on every rank.
  if (t.rank == 0 && nccl.get_unique_id(&id) != ncclSuccess) id = ncclUniqueId{};
  (*mpi)->bcast(id.internal, sizeof(id.internal), (*mpi)->byte, 0, (*mpi)->comm_world);
  exchange.how = "MPI_Bcast";
  return true;
}
#endif

Result<bool> exchange_by_store(const NcclApi& nccl, const ProcessTopology& t,
                               const InitOptions& options, ncclUniqueId& id, IdExchange& exchange) {
  auto store = open_job_store(t, "nccl", options.name, options.timeout);
  if (!store) return store.error();
  StoreClient& client = *store->client;
  if (t.rank == 0) {
    if (ncclResult_t r = nccl.get_unique_id(&id); r != ncclSuccess)
      return backend_error("nccl", "ncclGetUniqueId", nccl.get_error_string(r));
    auto set = client.set(store->prefix + "id", std::string_view(id.internal, sizeof(id.internal)));
    if (!set) return set.error();
  } else {
    auto got = client.get(store->prefix + "id", options.timeout);
    if (!got) return got.error();
    if (!*got || (*got)->size() != sizeof(id.internal))
      return backend_error("nccl", where_in(t), "rank 0's unique id through the store in time");
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
  NcclCommunicator(const NcclApi& nccl, const CudaDriverApi& cuda, const ProcessTopology& t,
                   IdExchange exchange, ncclComm_t comm, CUstream stream,
                   std::chrono::milliseconds timeout)
      : Communicator(t.rank, t.world_size, t.local_rank),
        nccl_(nccl),
        cuda_(cuda),
        exchange_(std::move(exchange)),
        comm_(comm),
        stream_(stream),
        timeout_(timeout) {}
  ~NcclCommunicator() override {
    if (device_) cuda_.mem_free(device_);
    nccl_.comm_destroy(comm_);
    cuda_.stream_destroy(stream_);
  }

  Backend backend() const override { return Backend::nccl; }

  Result<bool> allreduce_sum(void* data, std::size_t count, DataType type) override {
    const std::size_t bytes = count * size_of(type);
    if (bytes > device_bytes_) {
      if (device_) cuda_.mem_free(device_);
      device_ = 0;
      device_bytes_ = 0;
      if (CUresult e = cuda_.mem_alloc(&device_, bytes); e != CUDA_SUCCESS)
        return backend_error("nccl", "cuMemAlloc", cuda_.message(e));
      device_bytes_ = bytes;
    }
    void* on_device = reinterpret_cast<void*>(device_);
    cuda_.memcpy_htod_async(device_, data, bytes, stream_);
    auto reduced = settle(
        nccl_, comm_,
        nccl_.all_reduce(on_device, on_device, count, nccl_type(type), ncclSum, comm_, stream_),
        "ncclAllReduce", timeout_);
    if (!reduced) return reduced;
    cuda_.memcpy_dtoh_async(data, device_, bytes, stream_);
    if (CUresult e = cuda_.stream_synchronize(stream_); e != CUDA_SUCCESS)
      return backend_error("nccl", "cuStreamSynchronize", cuda_.message(e));
    return true;
  }

  Result<bool> barrier() override {
    int one = 1;
    return allreduce_sum(&one, 1, DataType::i32);
  }

 private:
  const NcclApi& nccl_;
  const CudaDriverApi& cuda_;
  IdExchange exchange_;  // outlives the NCCL communicator (destroyed last)
  ncclComm_t comm_;
  CUstream stream_;
  std::chrono::milliseconds timeout_;
  CUdeviceptr device_ = 0;
  std::size_t device_bytes_ = 0;
};

// Makes the rank's GPU (local rank modulo the GPUs this process sees) current through the
// driver, as NCCL's own runtime calls expect: its primary context, which they then use.
Result<const CudaDriverApi*> use_rank_gpu(const ProcessTopology& t, const std::string& how) {
  auto no_gpu = [&](const std::string& why) {
    return backend_error("nccl", where_in(t),
                         "a usable GPU (no usable GPU / driver: " + why +
                             "; the unique id had arrived through " + how + ")");
  };
  auto driver = cuda_driver_api();
  if (!driver) return no_gpu(driver.error().value + ": expected " + driver.error().expected);
  const CudaDriverApi& cuda = **driver;
  if (CUresult e = cuda.init(0); e != CUDA_SUCCESS) return no_gpu("cuInit: " + cuda.message(e));
  int devices = 0;
  if (CUresult e = cuda.device_get_count(&devices); e != CUDA_SUCCESS || devices == 0)
    return no_gpu("cuDeviceGetCount: " + (e != CUDA_SUCCESS ? cuda.message(e) : "0 devices"));
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (CUresult e = cuda.device_get(&device, t.local_rank % devices); e != CUDA_SUCCESS)
    return backend_error("nccl", "cuDeviceGet", cuda.message(e));
  if (CUresult e = cuda.primary_ctx_retain(&context, device); e != CUDA_SUCCESS)
    return backend_error("nccl", "cuDevicePrimaryCtxRetain", cuda.message(e));
  if (CUresult e = cuda.ctx_set_current(context); e != CUDA_SUCCESS)
    return backend_error("nccl", "cuCtxSetCurrent", cuda.message(e));
  return &cuda;
}

}  // namespace

Result<std::unique_ptr<Communicator>> start_nccl(const ProcessTopology& t,
                                                 const InitOptions& options) {
  auto loaded = nccl_api();
  if (!loaded) return loaded.error();
  const NcclApi& nccl = **loaded;
  ncclUniqueId id{};
  IdExchange exchange;
#if AML_COMM_WITH_MPI
  auto exchanged = under_mpi_launcher() ? exchange_by_mpi(nccl, t, id, exchange)
                                        : exchange_by_store(nccl, t, options, id, exchange);
#else
  auto exchanged = exchange_by_store(nccl, t, options, id, exchange);
#endif
  if (!exchanged) return exchanged.error();
  auto gpu = use_rank_gpu(t, exchange.how);
  if (!gpu) return gpu.error();
  const CudaDriverApi& cuda = **gpu;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t started = nccl.comm_init_rank_config(&comm, t.world_size, id, t.rank, &config);
  if (started != ncclSuccess && started != ncclInProgress) {
    if (comm) nccl.comm_abort(comm);
    return backend_error("nccl", "ncclCommInitRankConfig", nccl.get_error_string(started));
  }
  auto joined =
      settle(nccl, comm, started, "ncclCommInitRankConfig on " + where_in(t), options.timeout);
  if (!joined) return joined.error();
  CUstream stream = nullptr;
  if (CUresult e = cuda.stream_create(&stream, CU_STREAM_NON_BLOCKING); e != CUDA_SUCCESS) {
    nccl.comm_abort(comm);
    return backend_error("nccl", "cuStreamCreate", cuda.message(e));
  }
  return std::unique_ptr<Communicator>(
      new NcclCommunicator(nccl, cuda, t, std::move(exchange), comm, stream, options.timeout));
}

}  // namespace aml::comm

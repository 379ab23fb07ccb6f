#include "comm/nccl_api.hpp"

#include "util/shared_library.hpp"

namespace aml::comm {
namespace {

Result<NcclApi> load_nccl() {
  auto handle = open_library(
      {"nccl",
       "NCCL's libnccl.so.2",
       "AML_NCCL_LIBRARY",
       {"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2"}});
  if (!handle) return handle.error();
  NcclApi api{};
  SymbolTable table(*handle);
  table.bind(api.get_version, "ncclGetVersion");
  table.bind(api.get_unique_id, "ncclGetUniqueId");
  table.bind(api.comm_init_rank_config, "ncclCommInitRankConfig");  // NCCL 2.14
  table.bind(api.comm_get_async_error, "ncclCommGetAsyncError");
  table.bind(api.comm_abort, "ncclCommAbort");
  table.bind(api.comm_destroy, "ncclCommDestroy");
  table.bind(api.all_reduce, "ncclAllReduce");
  table.bind(api.get_error_string, "ncclGetErrorString");
  table.bind(api.get_last_error, "ncclGetLastError");
  if (!table.missing().empty())
    return invalid("nccl", "a libnccl without " + table.missing(), "NCCL 2.14 or newer");
  return api;
}

Result<CudaDriverApi> load_cuda_driver() {
  auto handle = open_library(
      {"nccl", "the GPU driver's libcuda.so.1", "AML_CUDA_DRIVER_LIBRARY", {"libcuda.so.1"}});
  if (!handle) return handle.error();
  CudaDriverApi api{};
  SymbolTable table(*handle);
  table.bind(api.init, "cuInit");
  table.bind(api.device_get_count, "cuDeviceGetCount");
  table.bind(api.device_get, "cuDeviceGet");
  table.bind(api.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  table.bind(api.ctx_set_current, "cuCtxSetCurrent");
  table.bind(api.stream_create, "cuStreamCreate");
  table.bind(api.stream_destroy, "cuStreamDestroy_v2");
  table.bind(api.stream_synchronize, "cuStreamSynchronize");
  table.bind(api.mem_alloc, "cuMemAlloc_v2");
  table.bind(api.mem_free, "cuMemFree_v2");
  table.bind(api.memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
  table.bind(api.memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
  table.bind(api.get_error_string, "cuGetErrorString");
  if (!table.missing().empty())
    return invalid("nccl", "a libcuda without " + table.missing(), "a newer GPU driver");
  return api;
}

}  // namespace

std::string CudaDriverApi::message(CUresult result) const {
  const char* text = nullptr;
  if (get_error_string(result, &text) != CUDA_SUCCESS || text == nullptr)
    return "CUDA error " + std::to_string(static_cast<int>(result));
  return text;
}

Result<const NcclApi*> nccl_api() { return load_once<NcclApi>(load_nccl); }
Result<const CudaDriverApi*> cuda_driver_api() {
  return load_once<CudaDriverApi>(load_cuda_driver);
}

}  // namespace aml::comm

// What the nccl backend opens at run time: NCCL (libnccl.so.2) and the GPU driver's API
// (libcuda.so.1, which every CUDA version's driver provides, unlike a versioned libcudart).
// Compiled against nccl.h and cuda.h for the types; the driver functions are looked up by the
// names cuda.h maps them to (cuMemAlloc is cuMemAlloc_v2).
#pragma once

#include <cuda.h>
#include <nccl.h>

#include <aml/error.hpp>

namespace aml::comm {

struct NcclApi {
  decltype(&::ncclGetVersion) get_version;
  decltype(&::ncclGetUniqueId) get_unique_id;
  decltype(&::ncclCommInitRankConfig) comm_init_rank_config;
  decltype(&::ncclCommGetAsyncError) comm_get_async_error;
  decltype(&::ncclCommAbort) comm_abort;
  decltype(&::ncclCommDestroy) comm_destroy;
  decltype(&::ncclAllReduce) all_reduce;
  decltype(&::ncclGetErrorString) get_error_string;
  decltype(&::ncclGetLastError) get_last_error;
};

struct CudaDriverApi {
  decltype(&::cuInit) init;
  decltype(&::cuDeviceGetCount) device_get_count;
  decltype(&::cuDeviceGet) device_get;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain;
  decltype(&::cuCtxSetCurrent) ctx_set_current;
  decltype(&::cuStreamCreate) stream_create;
  decltype(&::cuStreamDestroy) stream_destroy;
  decltype(&::cuStreamSynchronize) stream_synchronize;
  decltype(&::cuMemAlloc) mem_alloc;
  decltype(&::cuMemFree) mem_free;
  decltype(&::cuMemcpyHtoDAsync) memcpy_htod_async;
  decltype(&::cuMemcpyDtoHAsync) memcpy_dtoh_async;
  decltype(&::cuGetErrorString) get_error_string;

  std::string message(CUresult result) const;  // "CUDA_ERROR_NO_DEVICE ..." as the driver says
};

// Opened on first use, once per process. AML_NCCL_LIBRARY and AML_CUDA_DRIVER_LIBRARY name
// other library files; NCCL is also looked for where CUDA images keep it (/usr/local/cuda).
Result<const NcclApi*> nccl_api();
Result<const CudaDriverApi*> cuda_driver_api();

}  // namespace aml::comm

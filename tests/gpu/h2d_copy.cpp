// Host-to-device copies from this process's own memory, as a data loader's batches go: a
// pageable buffer (the driver stages it through pinned memory: the CPUs and memory near the
// GPU matter) and a pinned one. Prints "pageable GBPS pinned GBPS" for the GPU of LOCAL_RANK.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr std::size_t kBytes = std::size_t{256} << 20;
constexpr int kCopies = 20;

double copy_rate(void* device, const void* host) {
  cudaMemcpy(device, host, kBytes, cudaMemcpyHostToDevice);  // warm up
  cudaDeviceSynchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCopies; ++i) cudaMemcpy(device, host, kBytes, cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return static_cast<double>(kBytes) * kCopies / took.count() / 1e9;
}

}  // namespace

int main() {
  const char* local = std::getenv("LOCAL_RANK");
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "h2d_copy: no GPU\n");
    return 1;
  }
  const int gpu = (local != nullptr ? std::atoi(local) : 0) % count;
  cudaSetDevice(gpu);
  void* device = nullptr;
  void* pinned = nullptr;
  char* pageable = static_cast<char*>(std::malloc(kBytes));
  if (cudaMalloc(&device, kBytes) != cudaSuccess || pageable == nullptr ||
      cudaHostAlloc(&pinned, kBytes, cudaHostAllocDefault) != cudaSuccess) {
    std::fprintf(stderr, "h2d_copy: could not allocate 256 MiB\n");
    return 1;
  }
  std::memset(pageable, 1, kBytes);  // first touch: placed by this process's memory policy
  std::memset(pinned, 1, kBytes);
  std::printf("pageable %.2f pinned %.2f\n", copy_rate(device, pageable),
              copy_rate(device, pinned));
  return 0;
}

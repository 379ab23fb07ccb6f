// The page a worker and its launcher share for the progress API (DESIGN §6): the launcher
// makes one per worker (a memfd, inherited by the worker; its number in
// AML_LAUNCH_PROGRESS_FD), the worker counts its calls into it with an atomic add, and the
// launcher reads it when it looks for a hang. No system call per call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace aml {

inline constexpr char kProgressFdVariable[] = "AML_LAUNCH_PROGRESS_FD";
inline constexpr std::uint64_t kProgressMagic = 0x31474f5250'4c4d41ull;  // "AMLPROG1"
inline constexpr std::size_t kProgressPageBytes = 4096;

struct ProgressPage {
  std::atomic<std::uint64_t> magic;
  std::atomic<std::uint64_t> calls;  // how often progress() was called
  std::atomic<std::int64_t> step;    // the last step it was given (-1: none)
};

static_assert(sizeof(ProgressPage) <= kProgressPageBytes);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

}  // namespace aml

// What the CPU and the kernel let us use, asked of CPUID itself. __builtin_cpu_supports needs
// the compiler runtime to have filled in its CPU model at start-up, which the portable build's
// runtime (Zig's compiler-rt) does not: there it says "no" to everything, silently.
#pragma once

#if defined(__x86_64__)
#include <cpuid.h>

#include <cstdint>

namespace aml {

// AVX2 and BMI1 on the CPU, and the kernel saving the YMM registers (XCR0 bits 1 and 2).
inline bool cpu_has_avx2_bmi() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool osxsave = ecx & (1u << 27), avx = ecx & (1u << 28);
  if (!osxsave || !avx) return false;
  std::uint32_t xcr0_low, xcr0_high;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0x6) != 0x6) return false;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool bmi1 = ebx & (1u << 3), avx2 = ebx & (1u << 5);
  return bmi1 && avx2;
}

}  // namespace aml
#endif

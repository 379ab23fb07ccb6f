// A benchmark process's own peak resident memory, as the kernel counts it (VmHWM).
#pragma once

#include <fstream>
#include <string>

inline long peak_resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word) {
    if (word == "VmHWM:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
  }
  return 0;
}

#include "topology/nproc.hpp"

#include <algorithm>
#include <string>

namespace aml {
namespace {

// Entries of a device list; 0 for values that hide every device ("", "none", "void", "-1").
int list_length(const std::string& list) {
  if (list.empty() || list == "none" || list == "void" || list == "NoDevFiles" || list == "-1")
    return 0;
  return static_cast<int>(std::count(list.begin(), list.end(), ',')) + 1;
}

}  // namespace

NprocGuess auto_nproc_per_node(const Env& env, const Machine& machine) {
  for (std::string_view variable : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"}) {
    const std::string* list = find(env, variable);
    if (list == nullptr || *list == "all") continue;
    int length = list_length(*list);
    return length > 0 ? NprocGuess{length, length, variable} : NprocGuess{1, 0, "no visible GPU"};
  }
  int devices = machine.nvidia_device_count ? machine.nvidia_device_count() : 0;
  if (devices > 0) return {devices, devices, "/dev/nvidia*"};
  return {1, 0, "no GPU"};
}

}  // namespace aml

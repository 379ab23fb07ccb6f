// How many workers a node-level launch spawns when nobody said: DESIGN §2 `auto`.
#pragma once

#include <string_view>

#include "topology/env.hpp"

namespace aml {

struct NprocGuess {
  int count;             // at least 1
  int gpus;              // GPUs seen; 0 when none is visible
  std::string_view why;  // "CUDA_VISIBLE_DEVICES", "/dev/nvidia*", "no GPU", ...
};

// The length of CUDA_VISIBLE_DEVICES (or NVIDIA_VISIBLE_DEVICES) when it is a list, else the
// number of /dev/nvidia[0-9]* devices (also for NVIDIA_VISIBLE_DEVICES=all), else 1.
NprocGuess auto_nproc_per_node(const Env& env, const Machine& machine);

}  // namespace aml

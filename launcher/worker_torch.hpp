// Which PyTorch the workers will import, read from its files (torch/version.py) without running
// Python: the flight recorder's variables were renamed (TORCH_NCCL_TRACE_BUFFER_SIZE became
// TORCH_FR_BUFFER_SIZE), and the newest torch warns on every rank at the old names while an
// older one reads only those (hang_files.cpp). The interpreter is the one the launcher runs the
// program under, else the program itself where it is a Python, else its #! line's; its
// packages are looked for where that Python's sys.path would find them (PYTHONPATH, its
// virtual environment, its prefix's site- and dist-packages, the user's site).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/env.hpp"

namespace aml {

struct TorchFound {
  std::string version;  // "2.15.0+cu132"
  std::string where;    // the torch/version.py it was read from
};

// nullopt: not a Python program, or no torch found where its Python would look.
std::optional<TorchFound> worker_torch(const std::vector<std::string>& command,
                                       const std::string& interpreter, const Env& env);

// Whether `version` ("2.15.0+cu132", "1.13.0a0") is at least major.minor.
bool torch_at_least(const std::string& version, int major, int minor);

}  // namespace aml

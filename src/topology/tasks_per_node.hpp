// Slurm's compressed task counts: SLURM_STEP_TASKS_PER_NODE="4(x2),3" -> {4, 4, 3}.
#pragma once

#include <aml/error.hpp>
#include <string_view>
#include <vector>

namespace aml {

Result<std::vector<int>> expand_tasks_per_node(std::string_view variable, std::string_view text);

}  // namespace aml

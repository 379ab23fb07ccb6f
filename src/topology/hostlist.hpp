// Slurm hostlists: "gpu[001-004,7],login1,rack[2-3]_blade[08-09]".
#pragma once

#include <aml/error.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace aml {

inline constexpr std::size_t kMaxHostlistHosts = 1 << 20;

// Expands every entry in order; several bracket groups in one entry multiply out, left group
// outermost; zero padding follows the width of each range's first number. Errors (reversed
// range, unbalanced bracket, empty entry, more than max_hosts hosts) name `variable`.
Result<std::vector<std::string>> expand_hostlist(std::string_view variable, std::string_view text,
                                                 std::size_t max_hosts = kMaxHostlistHosts);

}  // namespace aml

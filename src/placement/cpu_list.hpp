// Sets of CPU (or NUMA node) numbers in the kernel's list form: "0-3,8,10-11".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aml {

// Sorted, without repeats.
using CpuList = std::vector<int>;

// The kernel's list form ("0-3,8"; "" and "\n" are empty); nullopt when it is not one.
std::optional<CpuList> parse_cpu_list(std::string_view text);

// The shortest list form: "0-3,8".
std::string cpu_list_text(const CpuList& cpus);

CpuList intersect(const CpuList& a, const CpuList& b);
bool contains_all(const CpuList& outer, const CpuList& inner);

}  // namespace aml

// Whole numbers from environment variables: decimal digits only, in range, or an Error.
#pragma once

#include <aml/error.hpp>
#include <aml/topology.hpp>
#include <optional>
#include <string_view>

#include "topology/env.hpp"

namespace aml {

// Decimal digits only (no sign, no spaces, no hex), within [min, max].
Result<int> parse_number(std::string_view variable, std::string_view text, int min, int max);
Result<int> parse_port(std::string_view variable, std::string_view text);

// The variable must be set and hold a number in [min, max].
Result<int> require_number(const Env& env, std::string_view variable, int min, int max);
// Unset gives nullopt; set but malformed is an error.
Result<std::optional<int>> optional_number(const Env& env, std::string_view variable, int min,
                                           int max);
Result<std::optional<int>> optional_port(const Env& env, std::string_view variable);

// "N" (a fixed count: min = max) or "MIN:MAX" with 1 <= MIN <= MAX.
Result<NodeRange> parse_node_range(std::string_view variable, std::string_view text);

inline constexpr int kMaxCount = 1 << 24;  // ranks, nodes, processes: far above any real job

}  // namespace aml

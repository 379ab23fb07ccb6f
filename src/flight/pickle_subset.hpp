// A reader of the subset of Python's pickle that PyTorch's flight recorder dumps are written in
// (DESIGN §6): dicts, lists, tuples, strings, bytes, ints, floats, booleans and None. Anything
// else (a class, a call: GLOBAL, REDUCE, BUILD ...) is refused, never run: a dump is read as
// data and its contents are not trusted. Tuples become arrays, bytes become strings.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "aml/error.hpp"

namespace aml {

// Bounds on what one dump may make: a dump past them is named, not read.
struct PickleLimits {
  std::size_t max_bytes = 64 << 20;    // the whole dump
  std::size_t max_values = 4'000'000;  // every value made, the memo's entries among them
  std::size_t max_depth = 64;          // containers inside containers
};

// The one value the pickle holds, or what is wrong with it ("opcode 0x63 (GLOBAL) at byte 12:
// not in the subset a flight recorder dump uses").
Result<nlohmann::json> read_pickle_subset(std::string_view bytes, const PickleLimits& limits = {});

}  // namespace aml

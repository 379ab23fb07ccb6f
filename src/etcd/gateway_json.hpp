// Reading etcd's v3 JSON gateway answers: its 64-bit numbers come as strings, absent fields
// are zero or empty.
#pragma once

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "etcd/base64.hpp"

namespace aml::etcd {

inline std::string text_of(const nlohmann::json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

inline long long number_of(const nlohmann::json& j, const char* name) {
  return std::atoll(text_of(j, name).c_str());
}

// A transaction's compare: the key (already base64) holds `expected`, or is absent where
// `expected` is empty.
inline nlohmann::json holds(const std::string& key, std::string_view expected) {
  nlohmann::json compare = {{"key", key}, {"result", "EQUAL"}};
  if (expected.empty()) {
    compare["target"] = "CREATE";
    compare["create_revision"] = "0";
  } else {
    compare["target"] = "VALUE";
    compare["value"] = to_base64(expected);
  }
  return compare;
}

}  // namespace aml::etcd

// Reading etcd's v3 JSON gateway answers: its 64-bit numbers come as strings, absent fields
// are zero or empty.
#pragma once

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace aml::etcd {

inline std::string text_of(const nlohmann::json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

inline long long number_of(const nlohmann::json& j, const char* name) {
  return std::atoll(text_of(j, name).c_str());
}

}  // namespace aml::etcd

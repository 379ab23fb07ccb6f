// A detail of an event line read back (report/): text for people, or a number; a key that is
// missing or null reads as "" or -1.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace aml {

inline std::string event_text(const nlohmann::ordered_json& details, const char* key) {
  auto value = details.find(key);
  if (value == details.end() || value->is_null()) return "";
  return value->is_string() ? value->get<std::string>() : value->dump();
}

inline int event_int(const nlohmann::ordered_json& details, const char* key) {
  auto value = details.find(key);
  return value != details.end() && value->is_number_integer() ? value->get<int>() : -1;
}

}  // namespace aml

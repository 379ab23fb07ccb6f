// A span as people read it in a message: "3 s", "0.25 s", "600 s".
#pragma once

#include <chrono>
#include <string>

namespace aml {

inline std::string seconds_text(std::chrono::milliseconds ms) {
  std::string text = std::to_string(ms.count() / 1000.0);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

}  // namespace aml

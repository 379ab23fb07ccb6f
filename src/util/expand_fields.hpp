// Templates with numbered fields: "[rank {rank}] ", "summary.{node_rank}.json".
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace aml {

// Every "{name}" of `fields` replaced by its value; anything else is kept as it is.
inline std::string expand_fields(std::string_view text,
                                 std::initializer_list<std::pair<std::string_view, int>> fields) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const auto& [name, value] : fields) {
      if (text.size() - i >= name.size() + 2 && text[i] == '{' &&
          text.substr(i + 1, name.size()) == name && text[i + 1 + name.size()] == '}') {
        out += std::to_string(value);
        i += name.size() + 2;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

}  // namespace aml

// A flag's spellings (FlagSpec::names, space-separated): the one --help shows, and the flag a
// spelling names. Read from the table (flag_table.cpp) through all_flags().
#include "flag_table.hpp"

namespace aml {

std::string_view main_name(const FlagSpec& spec) {
  return spec.names.substr(0, spec.names.find(' '));
}

const FlagSpec* find_flag(std::string_view spelling) {
  for (const FlagSpec& spec : all_flags()) {
    std::string_view names = spec.names;
    while (!names.empty()) {
      std::size_t space = names.find(' ');
      if (names.substr(0, space) == spelling) return &spec;
      if (space == std::string_view::npos) break;
      names.remove_prefix(space + 1);
    }
  }
  return nullptr;
}

}  // namespace aml

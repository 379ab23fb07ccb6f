// aml-launch-flags: the flag table (flag_table.hpp) as JSON, for the docs. reference and the
// torchrun migration page (scripts/make_reference_docs.py), so that they are made from the same
// table as --help, the completion and the man page. Not installed.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "flag_table.hpp"

namespace {

const char* torchrun_word(aml::Torchrun t) {
  switch (t) {
    case aml::Torchrun::none:
      return "none";
    case aml::Torchrun::same:
      return "same";
    case aml::Torchrun::differs:
      return "differs";
    case aml::Torchrun::ours_differs:
      return "differs";
    case aml::Torchrun::no_use:
      return "no_use";
  }
  return "none";
}

const char* takes_word(aml::Takes t) {
  switch (t) {
    case aml::Takes::nothing:
      return "nothing";
    case aml::Takes::value:
      return "value";
    case aml::Takes::optional_value:
      return "optional_value";
  }
  return "nothing";
}

}  // namespace

int main() {
  nlohmann::ordered_json flags = nlohmann::ordered_json::array();
  for (const aml::FlagSpec& spec : aml::all_flags()) {
    nlohmann::ordered_json names = nlohmann::ordered_json::array();
    std::string_view rest = spec.names;
    while (!rest.empty()) {
      const std::size_t space = rest.find(' ');
      names.push_back(std::string(rest.substr(0, space)));
      if (space == std::string_view::npos) break;
      rest.remove_prefix(space + 1);
    }
    flags.push_back({{"names", names},
                     {"takes", takes_word(spec.takes)},
                     {"shape", spec.shape},
                     {"variable", spec.variable},
                     {"default", spec.fallback},
                     {"help", spec.help},
                     {"torchrun", torchrun_word(spec.torchrun)},
                     {"note", spec.note}});
  }
  std::cout << flags.dump(1) << "\n";
  return 0;
}

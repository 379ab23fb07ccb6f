// The command line read against the flag table (flag_table.hpp): which flags were given, with
// what values, and the program after them. torchrun's rules: --flag VALUE and --flag=VALUE,
// the short forms as -r3, -r 3 or -r=3, the last of a repeated flag wins, and everything from
// the first word that is not a flag (or after --) is the program's.
#pragma once

#include <aml/error.hpp>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flag_table.hpp"

namespace aml {

struct GivenFlag {
  std::string value;       // "" for a switch, or --preflight without one
  std::string spelled_as;  // as given ("--nproc_per_node"), or the variable that gave it
};

struct CommandLine {
  std::array<std::optional<GivenFlag>, kFlagCount> flags;
  // Every value of a flag given more than once, in order (--health-path DIR --health-path DIR).
  std::array<std::vector<std::string>, kFlagCount> every;
  std::vector<std::string> program;  // the program and its arguments, as given
  bool after_dashes = false;         // the program came after --

  const std::optional<GivenFlag>& operator[](FlagId id) const {
    return flags[static_cast<int>(id)];
  }
  bool has(FlagId id) const { return (*this)[id].has_value(); }
  // The value given, or "" (never for a flag that was not).
  std::string value(FlagId id) const { return has(id) ? (*this)[id]->value : ""; }
};

// args are the words after the program's own name. A word the table does not know, before the
// program, is an error naming it.
Result<CommandLine> read_command_line(std::span<const char* const> args);

// The flags not given that the table lets a variable give (lookup: a variable's value, or
// nullptr), each marked as given by that variable.
template <typename Lookup>
void take_flag_variables(CommandLine& line, Lookup lookup) {
  for (const FlagSpec& spec : all_flags()) {
    if (!spec.parser_reads_variable || line.has(spec.id)) continue;
    const char* value = lookup(spec.variable);
    if (value == nullptr || *value == '\0') continue;
    line.flags[static_cast<int>(spec.id)] = GivenFlag{value, std::string(spec.variable)};
  }
}

}  // namespace aml

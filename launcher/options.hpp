// What the command line asked for.
#pragma once

#include <aml/error.hpp>
#include <string>
#include <variant>
#include <vector>

#include "topology/source.hpp"

namespace aml {

enum class OutputFormat { text, json };

struct Options {
  Overrides overrides;
  bool dry_run = false;
  OutputFormat format = OutputFormat::text;
  std::string run_id;
  double term_timeout_seconds = 30;
  std::vector<std::string> command;
};

// --help and --version print and end the program with status 0.
struct ExitNow {
  int status;
};

// Options, an early exit (help, version), or the flag that was wrong.
std::variant<Options, ExitNow, Error> parse_command_line(int argc, char** argv);

}  // namespace aml

// What each worker runs: the program after the flags, as torchrun runs it. A Python script (a
// .py file, or a file that cannot be run itself) runs under Python with -u, -m a module; any
// other program, --no-python, and a program after -- run as they are (after --, a .py file
// that cannot be run itself still gets Python). aml-launch has no Python of its own: the
// interpreter is PYTHON_EXEC (torchrun's variable), else the environment's where aml-launch was
// installed into a virtual or conda environment (torchrun runs sys.executable: its own
// environment's), else python3, else python on PATH.
#pragma once

#include <aml/error.hpp>
#include <functional>
#include <string>
#include <vector>

#include "options.hpp"
#include "topology/env.hpp"

namespace aml {

struct ProgramCommand {
  std::vector<std::string> argv;  // empty: no program was given
  std::string interpreter;        // the Python it runs under ("" when it runs as it is)
  std::string about;              // for --dry-run: how it runs, why, and how to choose otherwise
};

// The folder of this executable (where pip or conda installed it), "" if it cannot be read.
std::string launcher_dir();

// `launcher_dir`: gives the folder aml-launch's own executable is in (its environment's bin/);
// asked only for a program that runs under Python.
Result<ProgramCommand> program_command(const ProgramOptions& program, const Env& env,
                                       const std::function<std::string()>& launcher_dir);

}  // namespace aml

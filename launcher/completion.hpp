// --print-completion SHELL (torchrun's flag): aml-launch's own completion for bash, zsh or tcsh.
// bash's is packaging/aml-launch.bash-completion (compiled in), which reads the flags from the
// binary's --help; zsh's and tcsh's are written here from the flag table (flag_table.hpp), so
// that every spelling and every value a flag takes is the binary's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aml {

// The script for `shell` ("bash", "zsh" or "tcsh"); nullopt for any other.
std::optional<std::string> completion_script(std::string_view shell);

}  // namespace aml

#include "completion.hpp"

#include <sstream>
#include <string>
#include <vector>

#include "flag_table.hpp"

namespace aml {

extern const char* const kBashCompletion;

namespace {

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto space = text.find(' ');
    if (space != 0) out.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

// A description in zsh's _arguments spec: its first sentence, the spec's own marks escaped.
std::string zsh_description(std::string_view help) {
  std::string out;
  for (char c : help.substr(0, help.find(". "))) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    if (c == '\'') {
      out += "'\\''";
      continue;
    }
    out += c;
  }
  return out;
}

std::string zsh_action(std::string_view completes) {
  if (completes == "<file>") return "_files";
  if (completes == "<dir>") return "_files -/";
  if (completes.empty()) return " ";
  // Appended, not "(" + std::string: GCC 12's -Wrestrict misreads that in a Release build.
  std::string action = "(";
  action.append(completes).append(")");
  return action;
}

std::string zsh_script() {
  std::ostringstream out;
  out << "#compdef aml-launch\n"
         "# zsh completion for aml-launch (aml-launch --print-completion zsh): its flags from\n"
         "# its own flag table, then the program after the flags.\n"
         "_aml_launch() {\n"
         "  _arguments -S \\\n";
  for (const FlagSpec& flag : all_flags()) {
    const std::string about = zsh_description(flag.help);
    for (std::string_view name : words(flag.names)) {
      out << "    '" << name;
      switch (flag.takes) {
        case Takes::nothing:
          out << "[" << about << "]";
          break;
        case Takes::value:
          out << "=[" << about << "]:" << zsh_description(flag.shape) << ":"
              << zsh_action(flag.completes);
          break;
        case Takes::optional_value:
          out << "=-[" << about << "]::" << zsh_description(flag.shape) << ":"
              << zsh_action(flag.completes);
          break;
      }
      out << "' \\\n";
    }
  }
  out << "    '*::program:_normal'\n"
         "}\n"
         "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
         "  _aml_launch \"$@\"\n"
         "else\n"
         "  compdef _aml_launch aml-launch\n"
         "fi\n";
  return out.str();
}

// tcsh's complete: the flags after "--" or "-", each flag's values after it, files elsewhere.
std::string tcsh_script() {
  std::string long_flags, short_flags, values;
  for (const FlagSpec& flag : all_flags()) {
    for (std::string_view name : words(flag.names)) {
      if (name.starts_with("--")) {
        long_flags += std::string(long_flags.empty() ? "" : " ") + std::string(name.substr(2));
      } else {
        short_flags += std::string(short_flags.empty() ? "" : " ") + std::string(name.substr(1));
      }
      if (flag.takes != Takes::value || flag.completes.empty()) continue;
      std::string kind = "(";
      if (flag.completes == "<file>")
        kind = "f";
      else if (flag.completes == "<dir>")
        kind = "d";
      else
        kind.append(flag.completes).append(")");
      values += " 'n/" + std::string(name) + "/" + kind + "/'";
    }
  }
  // One line and no comment: tcsh's eval "`...`" takes it as one command.
  return "complete aml-launch 'c/--/(" + long_flags + ")/' 'c/-/(" + short_flags + ")/'" + values +
         " 'n/--/c/' 'p/*/f/'\n";
}

}  // namespace

std::optional<std::string> completion_script(std::string_view shell) {
  if (shell == "bash") return std::string(kBashCompletion);
  if (shell == "zsh") return zsh_script();
  if (shell == "tcsh") return tcsh_script();
  return std::nullopt;
}

}  // namespace aml

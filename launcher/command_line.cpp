#include "command_line.hpp"

namespace aml {
namespace {

bool is_preflight_backend(std::string_view word) {
  return word == "gloo" || word == "mpi" || word == "nccl";
}

// A flag's spelling and the value written into the same word, if any: "--nnodes=2" or "-r3".
struct Word {
  std::string_view spelling;
  std::optional<std::string_view> attached;
};

Word split_word(std::string_view word) {
  if (word.starts_with("--")) {
    std::size_t equals = word.find('=');
    if (equals == std::string_view::npos) return {word, std::nullopt};
    return {word.substr(0, equals), word.substr(equals + 1)};
  }
  // A short flag: -r, -r3, -r=3.
  if (word.size() == 2) return {word, std::nullopt};
  std::string_view rest = word.substr(2);
  if (rest.starts_with('=')) rest.remove_prefix(1);
  return {word.substr(0, 2), rest};
}

bool looks_like_a_flag(std::string_view word) {
  if (word.size() < 2 || word[0] != '-') return false;
  return find_flag(split_word(word).spelling) != nullptr;
}

}  // namespace

Result<CommandLine> read_command_line(std::span<const char* const> args) {
  CommandLine line;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string_view word = args[i];
    if (word == "--") {
      line.after_dashes = true;
      ++i;
      break;
    }
    // The program: the first word that is not a flag ("-" alone is a word, as argparse has it).
    if (word.size() < 2 || word[0] != '-') break;
    const Word split = split_word(word);
    const FlagSpec* spec = find_flag(split.spelling);
    if (spec == nullptr) {
      return invalid("command line", std::string(word),
                     "a known option (see --help), or -- before the command");
    }
    GivenFlag given{"", std::string(split.spelling)};
    switch (spec->takes) {
      case Takes::nothing:
        if (split.attached) {
          return invalid(std::string(split.spelling), std::string(*split.attached),
                         "nothing: " + std::string(split.spelling) + " is a switch");
        }
        break;
      case Takes::value:
        if (split.attached) {
          given.value = *split.attached;
        } else if (i + 1 < args.size() && std::string_view(args[i + 1]) != "--" &&
                   !looks_like_a_flag(args[i + 1])) {
          given.value = args[++i];
        } else {
          return missing(std::string(split.spelling),
                         "a value after it (" + std::string(spec->shape) + ")");
        }
        break;
      case Takes::optional_value:
        // Only a value it knows is taken from the next word: that one may be the program.
        if (split.attached) {
          given.value = *split.attached;
        } else if (i + 1 < args.size() && is_preflight_backend(args[i + 1])) {
          given.value = args[++i];
        }
        break;
    }
    line.every[static_cast<int>(spec->id)].push_back(given.value);
    line.flags[static_cast<int>(spec->id)] = std::move(given);
  }
  for (; i < args.size(); ++i) line.program.emplace_back(args[i]);
  return line;
}

}  // namespace aml

// The command line against the flag table: torchrun's ways of giving a flag, the program after
// the flags, and what is refused.
#include "command_line.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace aml {
namespace {

Result<CommandLine> read(std::vector<const char*> words) {
  return read_command_line(std::span<const char* const>(words.data(), words.size()));
}

TEST(CommandLine, EveryFlagIsFoundByEachOfItsSpellings) {
  for (const FlagSpec& spec : all_flags()) {
    std::string_view names = spec.names;
    while (!names.empty()) {
      const std::size_t space = names.find(' ');
      EXPECT_EQ(find_flag(names.substr(0, space)), &spec) << names.substr(0, space);
      if (space == std::string_view::npos) break;
      names.remove_prefix(space + 1);
    }
  }
}

TEST(CommandLine, NoSpellingNamesTwoFlags) {
  std::map<std::string, std::string> seen;
  for (const FlagSpec& spec : all_flags()) {
    std::string names(spec.names);
    std::size_t start = 0;
    while (start < names.size()) {
      const std::size_t space = std::min(names.find(' ', start), names.size());
      const std::string name = names.substr(start, space - start);
      EXPECT_TRUE(seen.emplace(name, std::string(main_name(spec))).second) << name;
      start = space + 1;
    }
  }
}

TEST(CommandLine, AValueComesAfterEqualsOrAsTheNextWord) {
  auto line = read({"--nproc_per_node=2", "--node-rank", "1", "train.py"});
  ASSERT_TRUE(line) << line.error().message();
  EXPECT_EQ(line->value(FlagId::nproc_per_node), "2");
  EXPECT_EQ(line->value(FlagId::node_rank), "1");
  EXPECT_EQ((*line)[FlagId::nproc_per_node]->spelled_as, "--nproc_per_node");
  EXPECT_EQ(line->program, std::vector<std::string>{"train.py"});
  EXPECT_FALSE(line->after_dashes);
}

TEST(CommandLine, AShortFlagTakesItsValueAttachedWithOrWithoutEqualsOrNext) {
  for (auto words : {std::vector<const char*>{"-r3", "x"}, std::vector<const char*>{"-r=3", "x"},
                     std::vector<const char*>{"-r", "3", "x"}}) {
    auto line = read(words);
    ASSERT_TRUE(line) << line.error().message();
    EXPECT_EQ(line->value(FlagId::redirects), "3");
    EXPECT_EQ(line->program, std::vector<std::string>{"x"});
  }
}

TEST(CommandLine, TheLastOfARepeatedFlagWins) {
  auto line = read({"--nnodes", "2", "--nnodes=3", "x"});
  ASSERT_TRUE(line);
  EXPECT_EQ(line->value(FlagId::nnodes), "3");
}

TEST(CommandLine, EverythingFromTheProgramOnIsTheProgramsFlagsAndDashesIncluded) {
  auto line = read({"-m", "pkg.train", "--nnodes", "9", "--", "-m"});
  ASSERT_TRUE(line);
  EXPECT_TRUE(line->has(FlagId::module));
  EXPECT_FALSE(line->has(FlagId::nnodes));
  EXPECT_EQ(line->program, (std::vector<std::string>{"pkg.train", "--nnodes", "9", "--", "-m"}));
}

TEST(CommandLine, AfterDashesTheProgramRunsAsGiven) {
  auto line = read({"--nnodes", "1", "--", "--not-ours", "x"});
  ASSERT_TRUE(line);
  EXPECT_TRUE(line->after_dashes);
  EXPECT_EQ(line->program, (std::vector<std::string>{"--not-ours", "x"}));
}

TEST(CommandLine, PreflightTakesOnlyABackendFromTheNextWord) {
  auto named = read({"--preflight", "nccl", "train.py"});
  ASSERT_TRUE(named);
  EXPECT_EQ(named->value(FlagId::preflight), "nccl");
  EXPECT_EQ(named->program, std::vector<std::string>{"train.py"});
  auto bare = read({"--preflight", "train.py"});
  ASSERT_TRUE(bare);
  EXPECT_TRUE(bare->has(FlagId::preflight));
  EXPECT_EQ(bare->value(FlagId::preflight), "");
  EXPECT_EQ(bare->program, std::vector<std::string>{"train.py"});
}

TEST(CommandLine, AnUnknownFlagIsNamedWithWhatToDo) {
  auto line = read({"--nproc-per-nodes", "2", "x"});
  ASSERT_FALSE(line);
  EXPECT_EQ(line.error().value, "--nproc-per-nodes");
  EXPECT_NE(line.error().expected.find("--help"), std::string::npos);
}

TEST(CommandLine, AFlagWithoutItsValueIsRefused) {
  for (auto words : {std::vector<const char*>{"--master-addr"},
                     std::vector<const char*>{"--master-addr", "--nnodes", "2"},
                     std::vector<const char*>{"--master-addr", "--"}}) {
    auto line = read(words);
    ASSERT_FALSE(line);
    EXPECT_EQ(line.error().variable, "--master-addr");
  }
}

TEST(CommandLine, ASwitchWithAValueIsRefused) {
  auto line = read({"--standalone=1", "x"});
  ASSERT_FALSE(line);
  EXPECT_EQ(line.error().variable, "--standalone");
}

TEST(CommandLine, AValueMayLookLikeANumberBelowZero) {
  auto line = read({"--term-timeout", "-1", "x"});
  ASSERT_TRUE(line);
  EXPECT_EQ(line->value(FlagId::term_timeout), "-1");
}

TEST(CommandLine, AVariableGivesAFlagNotGivenAndIsNamedAsItsSource) {
  auto line = read({"--max_restarts=2", "x"});
  ASSERT_TRUE(line);
  take_flag_variables(*line, [](std::string_view name) -> const char* {
    if (name == "PET_MAX_RESTARTS") return "5";
    if (name == "AML_LAUNCH_HANG_TIMEOUT") return "30";
    return nullptr;
  });
  EXPECT_EQ(line->value(FlagId::max_restarts), "2");  // the flag beats the variable
  EXPECT_EQ(line->value(FlagId::hang_timeout), "30");
  EXPECT_EQ((*line)[FlagId::hang_timeout]->spelled_as, "AML_LAUNCH_HANG_TIMEOUT");
}

}  // namespace
}  // namespace aml

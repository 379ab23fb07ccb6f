#include "supervisor/failure_summary.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

namespace aml {
namespace {

RunOutcome failed_by_signal() {
  RunOutcome outcome;
  WorkerExit failure{3,
                     1,
                     4242,
                     SIGKILL,
                     std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)),
                     {"CUDA error: out of memory", "\xff not utf-8"}};
  outcome.exit_code = 128 + SIGKILL;
  outcome.first_failure = failure;
  outcome.exits = {failure, WorkerExit{2, 0, 4241, SIGTERM, failure.when, {}}};
  return outcome;
}

TEST(FailureSummary, TextNamesRankNodeHostPidSignalTimeAndStderr) {
  std::string text = failure_summary_text(failed_by_signal(), {1, "node-7"});
  EXPECT_NE(text.find("rank 3 (local rank 1) on node 1 (node-7), pid 4242, failed first at "
                      "2023-11-14T22:13:20.000Z: signal 9 (SIGKILL)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  | CUDA error: out of memory"), std::string::npos) << text;
}

TEST(FailureSummary, NothingForACleanRun) {
  EXPECT_EQ(failure_summary_text(RunOutcome{}, {0, "h"}), "");
}

TEST(FailureSummary, JsonHasTheFirstFailureAndEveryWorker) {
  auto json = nlohmann::json::parse(run_summary_json(failed_by_signal(), {1, "node-7"}));
  EXPECT_EQ(json["exit_code"], 137);
  EXPECT_EQ(json["first_failure"]["rank"], 3);
  EXPECT_EQ(json["first_failure"]["signal_name"], "SIGKILL");
  EXPECT_TRUE(json["first_failure"]["exit_code"].is_null());
  EXPECT_EQ(json["first_failure"]["host"], "node-7");
  EXPECT_EQ(json["first_failure"]["stderr_tail"][0], "CUDA error: out of memory");
  EXPECT_EQ(json["workers"].size(), 2u);
  EXPECT_EQ(json["workers"][1]["signal_name"], "SIGTERM");
}

}  // namespace
}  // namespace aml

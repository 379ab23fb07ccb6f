// aml::notice(): the rank library's view of the notice file aml-launch writes
// (AML_LAUNCH_NOTICE_FILE): nothing until it is there, then the notice as written.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <aml/rank.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace aml::job_notice_test {
namespace {

TEST(JobNotice, NothingUntilTheFileIsThereThenTheNoticeAsWritten) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("aml-notice-test-" + std::to_string(getpid()) + ".json");
  unsetenv("AML_LAUNCH_NOTICE_FILE");
  EXPECT_FALSE(notice());  // outside aml-launch
  setenv("AML_LAUNCH_NOTICE_FILE", path.c_str(), 1);
  EXPECT_FALSE(notice());  // none yet
  std::ofstream(path) << R"({"kind": "preempt", "source": "aws-spot", "node_rank": 2,
    "host": "ip-10-0-0-7", "detail": "spot terminate", "deadline": "2026-11-28T10:02:00Z",
    "deadline_unix": 1795860120, "duration_seconds": null, "seconds_left": 28})";
  auto found = notice();
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kind, "preempt");
  EXPECT_EQ(found->source, "aws-spot");
  EXPECT_EQ(found->node_rank, 2);
  EXPECT_EQ(found->host, "ip-10-0-0-7");
  EXPECT_EQ(found->deadline_unix, 1795860120);
  EXPECT_EQ(found->duration_seconds, -1);
  std::ofstream(path) << "{half";
  EXPECT_FALSE(notice());  // not a notice: none
  std::filesystem::remove(path);
  unsetenv("AML_LAUNCH_NOTICE_FILE");
}

}  // namespace
}  // namespace aml::job_notice_test

// The events file's writer: one schema a line, appended, rotated at its bound.
#include "events/event_log.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace aml {
namespace {

class EventLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char folder[] = "/tmp/aml-event-log-XXXXXX";
    ASSERT_NE(mkdtemp(folder), nullptr);
    dir_ = folder;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<nlohmann::json> lines(const std::string& path) {
    std::vector<nlohmann::json> read;
    std::ifstream file(path);
    for (std::string line; std::getline(file, line);) read.push_back(nlohmann::json::parse(line));
    return read;
  }

  std::string dir_;
};

TEST_F(EventLogTest, ALineAnEventWithTheSchemasKeysInOrder) {
  auto log = EventLog::open(dir_ + "/made/events.jsonl", {2, "h", "run-1"});
  ASSERT_TRUE(log.ok()) << log.error().message();
  (*log)->write("launch");
  (*log)->set_round(3);
  (*log)->set_node_rank(1);
  (*log)->write("worker_exited", {{"exit_code", 3}}, 7);
  const auto read = lines(dir_ + "/made/events.jsonl");
  ASSERT_EQ(read.size(), 2u);
  // time, kind, node_rank, host, run_id, round, rank, details: their order in the file is
  // checked by the black-box test (nlohmann::json reads them sorted).
  EXPECT_EQ(read[1].size(), 8u);
  EXPECT_EQ(read[0]["kind"], "launch");
  EXPECT_EQ(read[0]["node_rank"], 2);
  EXPECT_TRUE(read[0]["rank"].is_null());
  EXPECT_EQ(read[0]["round"], 0);
  EXPECT_EQ(read[1]["rank"], 7);
  EXPECT_EQ(read[1]["round"], 3);
  EXPECT_EQ(read[1]["node_rank"], 1);
  EXPECT_EQ(read[1]["run_id"], "run-1");
  EXPECT_EQ(read[1]["details"]["exit_code"], 3);
  EXPECT_EQ(read[1]["time"].get<std::string>().size(), 24u);  // 2026-11-29T04:05:06.789Z
}

TEST_F(EventLogTest, AppendsToWhatAnEarlierLauncherWrote) {
  const std::string path = dir_ + "/events.jsonl";
  for (int i = 0; i < 2; ++i) {
    auto log = EventLog::open(path, {0, "h", "run"});
    ASSERT_TRUE(log.ok());
    (*log)->write("end");
  }
  EXPECT_EQ(lines(path).size(), 2u);
}

TEST_F(EventLogTest, RotatesAtItsBoundKeepingThePartBefore) {
  const std::string path = dir_ + "/events.jsonl";
  auto log = EventLog::open(path, {0, "h", "run"}, 1000);
  ASSERT_TRUE(log.ok());
  for (int i = 0; i < 30; ++i) (*log)->write("worker_started", {{"n", i}}, i);
  const auto now = lines(path);
  const auto before = lines(path + ".1");
  ASSERT_FALSE(now.empty());
  ASSERT_FALSE(before.empty());
  EXPECT_LE(std::filesystem::file_size(path), 1000u);
  EXPECT_LE(std::filesystem::file_size(path + ".1"), 1000u);
  // The newest in the file, the part just before it in FILE.1, no line cut.
  EXPECT_EQ(now.back()["details"]["n"], 29);
  EXPECT_EQ(before.back()["details"]["n"].get<int>() + 1, now.front()["details"]["n"].get<int>());
}

TEST_F(EventLogTest, ABurstsLinesGoOutTogetherAtItsEnd) {
  const std::string path = dir_ + "/events.jsonl";
  auto log = EventLog::open(path, {0, "h", "run"});
  ASSERT_TRUE(log.ok());
  {
    EventLog::Burst spawns(log->get());
    (*log)->write("worker_started", {}, 0);
    {
      EventLog::Burst inner(log->get());
      (*log)->write("worker_started", {}, 1);
    }
    EXPECT_EQ(std::filesystem::file_size(path), 0u) << "held until the outer burst ends";
  }
  const auto read = lines(path);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1]["rank"], 1);
  (*log)->write("end");  // no burst: at once
  EXPECT_EQ(lines(path).size(), 3u);
  EventLog::Burst none(nullptr);  // no log: nothing to hold
}

TEST_F(EventLogTest, AFileThatCanNoLongerBeWrittenIsSaidOnceAndTheEventsStop) {
  const std::string folder = dir_ + "/gone";
  auto log = EventLog::open(folder + "/events.jsonl", {0, "h", "run"}, 200);
  ASSERT_TRUE(log.ok());
  (*log)->write("launch");
  std::filesystem::remove_all(folder);  // the rotation's rename fails from now on
  testing::internal::CaptureStderr();
  for (int i = 0; i < 10; ++i) (*log)->write("worker_started", {{"n", i}}, i);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("cannot write --events-file " + folder + "/events.jsonl"), std::string::npos)
      << said;
  EXPECT_EQ(said.find("cannot write", said.find("cannot write") + 1), std::string::npos)
      << "said once: " << said;
  EXPECT_FALSE(std::filesystem::exists(folder));
}

TEST_F(EventLogTest, AFileThatCannotBeMadeIsAnErrorNamingTheFlag) {
  std::ofstream(dir_ + "/a-file") << "x";
  auto log = EventLog::open(dir_ + "/a-file/events.jsonl", {0, "h", "run"});
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.error().message().find("--events-file"), std::string::npos);
}

TEST_F(EventLogTest, TheJobsFileHasTheLinesWrittenWhileThisLauncherIsNodeZero) {
  const std::string own = dir_ + "/events.jsonl";
  const std::string job = dir_ + "/job/events.jsonl";
  auto log = EventLog::open(own, {0, "h", "run"});
  ASSERT_TRUE(log.ok());
  ASSERT_FALSE((*log)->keep_job_file(job, false).has_value());
  (*log)->write("launch");
  (*log)->write("rendezvous_begun");
  EXPECT_FALSE(std::filesystem::exists(job)) << "opened only once this launcher is node 0";
  (*log)->write_job_file(true);
  (*log)->write("rendezvous_formed", {{"nodes", 2}});
  (*log)->write_job_file(false);  // another launcher gives the next round's seats
  (*log)->write("rendezvous_formed", {{"nodes", 3}});
  (*log)->write_job_file(true);  // and this one again: its lines from then on
  (*log)->write("end");
  // Its lines from before it knew it was node 0 came first: the job's file and its own begin
  // alike, at its launch.
  const auto read = lines(job);
  ASSERT_EQ(read.size(), 4u);
  EXPECT_EQ(read[0]["kind"], "launch");
  EXPECT_EQ(read[1]["kind"], "rendezvous_begun");
  EXPECT_EQ(read[2]["details"]["nodes"], 2);
  EXPECT_EQ(read[3]["kind"], "end");
  EXPECT_EQ(lines(own).size(), 5u);
  // The job's file alone, with no --events-file of this launcher's.
  auto alone = EventLog::without_file({0, "h", "run"});
  ASSERT_FALSE(alone->keep_job_file(dir_ + "/alone.jsonl", true).has_value());
  EXPECT_TRUE(alone->writes_job_file());
  alone->write("end");
  EXPECT_EQ(lines(dir_ + "/alone.jsonl").size(), 1u);
}

TEST_F(EventLogTest, ALauncherThatIsNeverNodeZeroWritesNoJobFileAndKeepsABoundedBacklog) {
  const std::string job = dir_ + "/job.jsonl";
  auto log = EventLog::without_file({1, "h", "run"});
  ASSERT_FALSE(log->keep_job_file(job, false).has_value());
  const std::string big(1024, 'x');
  // More than the backlog holds: what comes after is no more kept, and nothing is written.
  for (std::size_t i = 0; i < EventLog::kBacklogBytes / 1024 + 8; ++i)
    log->write("note", {{"pad", big}});
  log->write_job_file(false);
  log->write("end");
  EXPECT_FALSE(std::filesystem::exists(job));
  log->write_job_file(true);  // node 0 only now: its file begins here
  log->write("rendezvous_formed");
  const auto read = lines(job);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0]["kind"], "rendezvous_formed");
}

TEST_F(EventLogTest, AJobsFileThatCannotBeMadeIsAnErrorAtOnceOrSaidOnceLater) {
  std::ofstream(dir_ + "/a-file") << "x";
  auto log = EventLog::without_file({0, "h", "run"});
  const auto error = log->keep_job_file(dir_ + "/a-file/job.jsonl", true);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message().find("--job-events-file"), std::string::npos) << error->message();
  auto later = EventLog::without_file({0, "h", "run"});
  ASSERT_FALSE(later->keep_job_file(dir_ + "/a-file/job.jsonl", false).has_value());
  testing::internal::CaptureStderr();
  later->write_job_file(true);
  later->write_job_file(true);
  later->write("end");
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("--job-events-file"), std::string::npos) << said;
  EXPECT_EQ(said.find("--job-events-file", said.find("--job-events-file") + 1), std::string::npos)
      << "said once: " << said;
  EXPECT_FALSE(later->writes_job_file());
}

}  // namespace
}  // namespace aml

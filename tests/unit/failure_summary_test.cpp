#include "supervisor/failure_summary.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "supervisor/job_failure.hpp"

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

JobStop interrupted_here() {
  JobStop stop;
  stop.signal = SIGINT;
  stop.sender_pid = 913;
  stop.sender = "bash";
  stop.time = "2026-11-22T03:03:10.062Z";
  stop.workers = 3;
  stop.ended_on_their_own = 2;
  stop.killed_after_grace = 1;
  stop.passed_on = SIGINT;
  return stop;
}

TEST(FailureSummary, AStopIsNoFailure) {
  RunOutcome outcome;
  outcome.exit_code = 130;
  outcome.stopped = interrupted_here();
  std::string text = failure_summary_text(outcome, {0, "host-3"});
  EXPECT_EQ(
      text,
      "aml-launch: node 0 (host-3): stopped by SIGINT from outside (sent by pid 913, bash) at "
      "2026-11-22T03:03:10.062Z: 2 of 3 worker(s) ended within the grace after SIGINT, 1 killed "
      "(SIGKILL) after the grace\n");
  auto json = nlohmann::json::parse(run_summary_json(outcome, {0, "host-3"}));
  EXPECT_TRUE(json["first_failure"].is_null());
  EXPECT_EQ(json["stopped"]["signal_name"], "SIGINT");
  EXPECT_EQ(json["stopped"]["from"], "outside");
  EXPECT_EQ(json["stopped"]["sender_pid"], 913);
  EXPECT_EQ(json["stopped"]["node_rank"], 0);
  EXPECT_EQ(json["stopped"]["killed_after_grace"], 1);
}

TEST(FailureSummary, AStopFromAnotherNodeNamesThatNode) {
  RunOutcome outcome;
  JobStop stop;
  stop.signal = SIGTERM;
  stop.node_rank = 0;
  stop.host = "host-3";
  stop.also_here = true;
  stop.time = "2026-11-22T03:03:10.062Z";
  stop.workers = 2;
  stop.ended_on_their_own = 2;
  stop.passed_on = SIGTERM;
  outcome.stopped = stop;
  std::string text = failure_summary_text(outcome, {1, "host-4"});
  EXPECT_EQ(text,
            "aml-launch: node 1 (host-4): the job was stopped by SIGTERM sent to node 0 (host-3)'s "
            "launcher (this node's got one too) at 2026-11-22T03:03:10.062Z: 2 of 2 worker(s) "
            "ended within the grace after SIGTERM\n");
  auto json = nlohmann::json::parse(run_summary_json(outcome, {1, "host-4"}));
  EXPECT_EQ(json["stopped"]["from"], "another node");
  EXPECT_EQ(json["stopped"]["node_rank"], 0);
  EXPECT_TRUE(json["stopped"]["sender_pid"].is_null());
}

TEST(FailureSummary, AFailureBeforeTheStopStaysTheFailure) {
  RunOutcome outcome = failed_by_signal();
  outcome.stopped = interrupted_here();
  std::string text = failure_summary_text(outcome, {1, "node-7"});
  EXPECT_LT(text.find("failed first"), text.find("stopped by SIGINT")) << text;
  auto json = nlohmann::json::parse(run_summary_json(outcome, {1, "node-7"}));
  EXPECT_EQ(json["first_failure"]["rank"], 3);
  EXPECT_EQ(json["stopped"]["signal"], SIGINT);
}

// mpirun after a rank failed: TERM to every launcher, already stopping its worker for that
// failure, then SIGKILL. The TERM is named (not passed on), said at once; the end tells how
// the worker went.
TEST(FailureSummary, AStopDuringAFailuresTeardownIsNamedNotTakenForTheVerdict) {
  RunOutcome outcome;
  JobFailure elsewhere;
  elsewhere.node_rank = 1;
  elsewhere.host = "h1";
  elsewhere.rank = 3;
  elsewhere.local_rank = 1;
  elsewhere.pid = 77;
  elsewhere.exit_code = 9;
  elsewhere.status = "exit code 9";
  elsewhere.time = "2026-11-22T03:03:09.000Z";
  outcome.remote_failure = elsewhere;
  outcome.exit_code = 9;
  JobStop stop;
  stop.signal = SIGTERM;
  stop.sender_pid = 500;
  stop.sender = "orted";
  stop.time = "2026-11-22T03:03:10.000Z";
  stop.workers = 1;
  stop.during_teardown = true;
  outcome.stopped = stop;
  const NodeIdentity rank2{1, "h1", 2};
  const std::string head =
      "aml-launch: rank 2 (node 1, h1): SIGTERM from outside (sent by pid 500, orted) came at "
      "2026-11-22T03:03:10.000Z while it stopped its worker for that: not passed on (they had "
      "SIGTERM)";
  const std::string at_once = late_stop_text(outcome, rank2);
  EXPECT_NE(at_once.find("stopped its worker: the job failed on this node: rank 3 (local rank 1) "
                         "on node 1 (h1), pid 77"),
            std::string::npos)
      << at_once;
  EXPECT_NE(at_once.find(head + "\n"), std::string::npos) << at_once;

  outcome.stopped->killed_after_grace = 1;
  outcome.stopped->launcher_killed_at = "2026-11-22T03:03:11.000Z";
  const std::string whole = failure_summary_text(outcome, rank2);
  EXPECT_NE(whole.find(head + "; 0 of 1 worker(s) ended within the grace after SIGTERM; its "
                              "launcher was killed (SIGKILL) at 2026-11-22T03:03:11.000Z and 1 "
                              "worker(s) with it\n"),
            std::string::npos)
      << whole;
  outcome.reported_at_once = true;
  EXPECT_EQ(failure_summary_text(outcome, rank2),
            "aml-launch: rank 2 (node 1, h1): 0 of 1 worker(s) ended within the grace after "
            "SIGTERM; its launcher was killed (SIGKILL) at 2026-11-22T03:03:11.000Z and 1 "
            "worker(s) with it\n");
  auto json = nlohmann::json::parse(run_summary_json(outcome, rank2));
  EXPECT_EQ(json["first_failure"]["rank"], 3);
  EXPECT_TRUE(json["stopped"]["during_teardown"].get<bool>());
  EXPECT_TRUE(json["stopped"]["passed_on"].is_null());
  EXPECT_EQ(json["stopped"]["launcher_killed_at"], "2026-11-22T03:03:11.000Z");
}

TEST(FailureSummary, ARankOnAnotherNodeIsSaidSo) {
  RunOutcome outcome;
  JobFailure elsewhere;
  elsewhere.node_rank = 0;
  elsewhere.rank = 1;
  elsewhere.pid = 5;
  elsewhere.status = "exit code 2";
  outcome.remote_failure = elsewhere;
  const std::string text = failure_summary_text(outcome, {1, "h1", 3});
  EXPECT_NE(text.find("rank 3 (node 1) stopped its worker: the job failed on another node: rank 1"),
            std::string::npos)
      << text;
}

// A launcher the job's end found waiting: its summary names the first failure and notice the
// node that ended the job told (on another node); what it cannot read is left out, not trusted,
// and its text says nothing more (node 0's words were said).
TEST(FailureSummary, AWaitingLaunchersSummaryNamesWhatTheEndTold) {
  RunOutcome outcome;
  outcome.exit_code = 200;
  outcome.told_end =
      R"({"first_failure":{"node_rank":2,"host":"c","status":"its launcher was lost",)"
      R"("on_another_node":false},"notice":{"event_id":"e-1","kind":"preempt"}})";
  const auto told = outcome_json(outcome, {-1, "h", -1});
  EXPECT_EQ(told["first_failure"]["host"], "c");
  EXPECT_EQ(told["first_failure"]["on_another_node"], true);
  EXPECT_EQ(told["notice"]["event_id"], "e-1");
  EXPECT_EQ(failure_summary_text(outcome, {-1, "h", -1}), "");
  outcome.told_end = R"({"first_failure":"not an object",)";
  const auto unread = outcome_json(outcome, {-1, "h", -1});
  EXPECT_TRUE(unread["first_failure"].is_null());
  EXPECT_TRUE(unread["notice"].is_null());
}

}  // namespace
}  // namespace aml

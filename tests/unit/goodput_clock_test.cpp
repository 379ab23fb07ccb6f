// The goodput clock (events/goodput_clock.hpp): where a node's wall time went, from its events
// at known times.
#include "events/goodput_clock.hpp"

#include <gtest/gtest.h>

namespace aml {
namespace {

using namespace std::chrono_literals;
using Clock = GoodputClock::Clock;
using Phase = GoodputClock::Phase;

class GoodputClockTest : public ::testing::Test {
 protected:
  Clock::time_point t0 = Clock::now();
  GoodputClock clock{t0};
  nlohmann::ordered_json none = nlohmann::ordered_json::object();

  void at(std::chrono::milliseconds when, std::string_view kind, int round = 0) {
    clock.on_event({kind, none, -1, round, 0, t0 + when});
  }
  double spent(Phase phase, std::chrono::milliseconds now) {
    return clock.totals(t0 + now)[static_cast<std::size_t>(phase)];
  }
};

TEST_F(GoodputClockTest, ARunThatSucceedsIsRendezvousThenRunning) {
  at(0ms, "launch");
  at(2000ms, "round_started");
  at(12000ms, "round_ended");
  at(12000ms, "end");
  EXPECT_DOUBLE_EQ(spent(Phase::rendezvous, 20000ms), 2.0);
  EXPECT_DOUBLE_EQ(spent(Phase::running, 20000ms), 10.0);  // the end stops the clock
  EXPECT_EQ(clock.state(), "ended");
  EXPECT_DOUBLE_EQ(clock.json(t0 + 20000ms)["trained_share"].get<double>(), 0.833);
}

TEST_F(GoodputClockTest, AFailureToTheNextRoundsWorkersIsRecovery) {
  at(0ms, "launch");
  at(1000ms, "round_started");
  at(5000ms, "failure");
  EXPECT_EQ(clock.state(), "recovering");
  at(6000ms, "round_ended");
  at(6000ms, "restart");
  at(8000ms, "round_started", 1);
  at(18000ms, "round_ended", 1);
  at(18000ms, "end", 1);
  EXPECT_DOUBLE_EQ(spent(Phase::running, 18000ms), 14.0);
  EXPECT_DOUBLE_EQ(spent(Phase::recovery, 18000ms), 3.0);
  EXPECT_DOUBLE_EQ(spent(Phase::stopping, 18000ms), 0.0);
  ASSERT_EQ(clock.recoveries().size(), 1u);
  EXPECT_DOUBLE_EQ(clock.recoveries()[0], 3.0);
  // Per round: the recovery is the cost of starting round 1.
  const auto rounds = clock.rounds(t0 + 18000ms);
  EXPECT_DOUBLE_EQ(rounds.at(0)[static_cast<std::size_t>(Phase::running)], 4.0);
  EXPECT_DOUBLE_EQ(rounds.at(1)[static_cast<std::size_t>(Phase::recovery)], 3.0);
  EXPECT_DOUBLE_EQ(rounds.at(1)[static_cast<std::size_t>(Phase::running)], 10.0);
}

// The running ends at the failing worker's exit, not at the "failure" written after the launcher
// told the others (seconds later where the rendezvous was out of reach); a worker that ends 0
// does not end it, nor does a worker stopped after the failure.
TEST_F(GoodputClockTest, AFailingWorkersExitEndsTheRunningNotTheFailureWrittenLater) {
  at(0ms, "launch");
  at(1000ms, "round_started");
  nlohmann::ordered_json finished = {{"exit_code", 0}, {"signal", nullptr}};
  clock.on_event({"worker_exited", finished, 1, 0, 0, t0 + 3000ms});
  EXPECT_EQ(clock.state(), "running");
  nlohmann::ordered_json failed = {{"exit_code", 1}, {"signal", nullptr}};
  clock.on_event({"worker_exited", failed, 0, 0, 0, t0 + 5000ms});
  at(8000ms, "failure");
  nlohmann::ordered_json stopped = {{"exit_code", nullptr}, {"signal", 15}};
  clock.on_event({"worker_exited", stopped, 2, 0, 0, t0 + 8500ms});
  at(9000ms, "round_ended");
  at(9000ms, "end");
  EXPECT_DOUBLE_EQ(spent(Phase::running, 9000ms), 4.0);
  EXPECT_DOUBLE_EQ(spent(Phase::stopping, 9000ms), 4.0);
}

TEST_F(GoodputClockTest, AnotherNodesFailureOrLossStartsTheRecoveryWhenHeard) {
  at(0ms, "launch");
  at(1000ms, "round_started");
  at(3000ms, "node_lost");
  at(3500ms, "round_ended");  // this node's workers took half a second to stop
  at(4000ms, "round_started", 1);
  EXPECT_DOUBLE_EQ(spent(Phase::running, 4000ms), 2.0);
  EXPECT_DOUBLE_EQ(spent(Phase::recovery, 4000ms), 1.0);
}

TEST_F(GoodputClockTest, AFailureWithNoRoundAfterItIsTheStop) {
  at(0ms, "launch");
  at(1000ms, "round_started");
  at(4000ms, "failure");
  at(4500ms, "round_ended");
  at(4500ms, "end");
  EXPECT_DOUBLE_EQ(spent(Phase::running, 9000ms), 3.0);
  EXPECT_DOUBLE_EQ(spent(Phase::stopping, 9000ms), 0.5);
  EXPECT_DOUBLE_EQ(spent(Phase::recovery, 9000ms), 0.0);
  EXPECT_NE(clock.text(t0 + 9000ms).find("3.00 s of it the workers running (67 %)"),
            std::string::npos)
      << clock.text(t0 + 9000ms);
}

TEST_F(GoodputClockTest, AStopFromOutsideIsStoppingAndASpareWaitIsItsOwn) {
  at(0ms, "launch");
  at(0ms, "spare_waiting");
  EXPECT_EQ(clock.state(), "spare");
  at(5000ms, "rendezvous_formed", 2);
  at(5500ms, "round_started", 2);
  at(7500ms, "stop", 2);
  EXPECT_EQ(clock.state(), "stopping");
  at(8000ms, "round_ended", 2);
  at(8000ms, "end", 2);
  EXPECT_DOUBLE_EQ(spent(Phase::spare, 8000ms), 5.0);
  EXPECT_DOUBLE_EQ(spent(Phase::rendezvous, 8000ms), 0.5);
  EXPECT_DOUBLE_EQ(spent(Phase::running, 8000ms), 2.0);
  EXPECT_DOUBLE_EQ(spent(Phase::stopping, 8000ms), 0.5);
}

TEST_F(GoodputClockTest, ABenchedNodesWaitAfterItsFailureIsASparesNotAStop) {
  at(0ms, "launch");
  at(1000ms, "round_started");
  at(3000ms, "failure");
  at(3500ms, "round_ended");
  at(3500ms, "restart");
  at(4000ms, "benched_waiting", 1);  // its rank failed first: it sits out
  EXPECT_EQ(clock.state(), "spare");
  at(9000ms, "ended_while_waiting", 1);
  at(9000ms, "end", 1);
  // Its failure to the moment it knew: its workers' stop (no round of its own came after it).
  EXPECT_DOUBLE_EQ(spent(Phase::stopping, 9000ms), 1.0);
  EXPECT_DOUBLE_EQ(spent(Phase::recovery, 9000ms), 0.0);
  EXPECT_DOUBLE_EQ(spent(Phase::spare, 9000ms), 5.0);
}

TEST_F(GoodputClockTest, ThePhaseUnderWayCountsToNow) {
  at(0ms, "launch");
  at(1000ms, "round_started");
  EXPECT_DOUBLE_EQ(spent(Phase::running, 4000ms), 3.0);
  EXPECT_EQ(clock.state(), "running");
  const auto json = clock.json(t0 + 4000ms);
  EXPECT_DOUBLE_EQ(json["wall_seconds"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(json["rounds"][0]["running_seconds"].get<double>(), 3.0);
}

}  // namespace
}  // namespace aml

// The round's decisions fed with events, no process: the orders of events that earlier issues
// found by hand each give the verdict DESIGN §4 and §5 say.
#include "supervisor/job_verdict.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <deque>

#include "verdict_events.hpp"

namespace aml {
namespace {

using Clock = JobVerdict::Clock;
using std::chrono::seconds;

using verdict_events::exit_of;
using verdict_events::exited;
using verdict_events::failure_on_node;
using verdict_events::killed_by;
using verdict_events::lost_launcher;
using verdict_events::preempt;
using verdict_events::Recorder;

JobFailure stop_on_node(int node, int sig) {
  JobFailure f;
  f.node_rank = node;
  f.member = node;
  f.stop_signal = sig;
  f.exit_code = 128 + sig;
  return f;
}

struct Round {
  explicit Round(int member = -1, int workers = 2) : verdict(effects, seconds(30), member) {
    for (int i = 0; i < workers; ++i) verdict.worker_started();
  }
  Recorder effects;
  JobVerdict verdict;
  Clock::time_point t0 = Clock::now();
};

TEST(JobVerdict, ACleanRoundExitsZeroAndSignalsNobody) {
  Round r;
  EXPECT_FALSE(r.verdict.worker_ended(exit_of(0, exited(0)), {}, r.t0));
  EXPECT_FALSE(r.verdict.worker_ended(exit_of(1, exited(0)), {}, r.t0));
  EXPECT_EQ(r.verdict.final_outcome().exit_code, 0);
  EXPECT_TRUE(r.effects.signals.empty());
  EXPECT_FALSE(r.verdict.tearing_down());
}

TEST(JobVerdict, TheFirstFailureIsNamedAndTheOthersGetContThenTerm) {
  Round r;
  EXPECT_TRUE(r.verdict.worker_ended(exit_of(1, exited(7)), {}, r.t0));
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGTERM}));
  // The rank stopped for it dies of SIGTERM: that is no second failure.
  EXPECT_FALSE(r.verdict.worker_ended(exit_of(0, killed_by(SIGTERM)), {}, r.t0));
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 7);
  ASSERT_TRUE(o.first_failure);
  EXPECT_EQ(o.first_failure->rank, 1);
}

TEST(JobVerdict, TheGraceEndsInSigkillOnce) {
  Round r;
  r.verdict.worker_ended(exit_of(1, killed_by(SIGSEGV)), {}, r.t0);
  ASSERT_TRUE(r.verdict.deadline());
  EXPECT_EQ(*r.verdict.deadline(), r.t0 + seconds(30));
  r.verdict.tick(r.t0 + seconds(29));
  EXPECT_FALSE(r.verdict.killed());
  r.verdict.tick(r.t0 + seconds(30));
  r.verdict.tick(r.t0 + seconds(31));
  EXPECT_TRUE(r.verdict.killed());
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGTERM, SIGKILL}));
  EXPECT_EQ(r.verdict.final_outcome().exit_code, 128 + SIGSEGV);
}

TEST(JobVerdict, AStopIsNoFailureAndExitsWithItsSignal) {
  Round r;
  r.verdict.stop_from_outside(SIGINT, 913, "bash", "T", r.t0);
  // INT stays INT: Python's KeyboardInterrupt handlers run.
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGINT}));
  r.verdict.worker_ended(exit_of(0, exited(130)), {}, r.t0);
  r.verdict.worker_ended(exit_of(1, killed_by(SIGINT)), {}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 130);
  EXPECT_FALSE(o.first_failure);
  ASSERT_TRUE(o.stopped);
  EXPECT_EQ(o.stopped->sender, "bash");
  EXPECT_EQ(o.stopped->workers, 2);
  EXPECT_EQ(o.stopped->ended_on_their_own, 2);
  EXPECT_EQ(o.stopped->passed_on, SIGINT);
  EXPECT_FALSE(o.stopped->during_teardown);
  EXPECT_TRUE(o.stop_requested);
}

// A round ending to form again (a regroup: no restart used) is no failure: the scheduler's TERM
// that comes meanwhile ends the job as a stop (it ended with the lost node's 1).
TEST(JobVerdict, AStopWhileTheRoundFormsAgainIsAStop) {
  Round r(/*member=*/2);
  JobFailure regroup = failure_on_node(1, -1, 1);
  regroup.regroup = true;
  r.verdict.peer_news({regroup, false, {}}, r.t0);
  r.verdict.stop_from_outside(SIGTERM, 1, "init", "T", r.t0);
  r.verdict.worker_ended(exit_of(0, killed_by(SIGTERM)), {}, r.t0);
  r.verdict.worker_ended(exit_of(1, killed_by(SIGTERM)), {}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 128 + SIGTERM);
  ASSERT_TRUE(o.stopped);
}

// The scheduler stops every node at once: node 0, the store's host, goes first, and a node
// stopped a moment before hears the rendezvous (or a launcher) lost after its own stop. That is
// the same stop, not a failure (the fault campaign's final SIGTERM: 143 on node 0, 1 on the
// others, before).
TEST(JobVerdict, TheRendezvousLostAfterThisNodesStopIsTheStop) {
  for (const char* status : {"the job's rendezvous was lost: node 0's store at h:1 could not be "
                             "reached",
                             "its launcher was lost: it died (its store's connection closed)"}) {
    Round r(/*member=*/1);
    r.verdict.stop_from_outside(SIGTERM, 1, "kubelet", "T", r.t0);
    JobFailure lost = failure_on_node(-1, -1, 1);
    lost.pid = 0;
    lost.status = status;
    r.verdict.peer_news({lost, false, {}}, r.t0);
    r.verdict.worker_ended(exit_of(0, killed_by(SIGTERM)), {}, r.t0);
    r.verdict.worker_ended(exit_of(1, killed_by(SIGTERM)), {}, r.t0);
    RunOutcome o = r.verdict.final_outcome();
    EXPECT_EQ(o.exit_code, 128 + SIGTERM) << status;
    EXPECT_FALSE(o.remote_failure) << status;
    ASSERT_TRUE(o.stopped) << status;
  }
}

TEST(JobVerdict, AFailureDuringAStopIsStillAFailure) {
  Round r;
  r.verdict.stop_from_outside(SIGTERM, 1, "init", "T", r.t0);
  // Rank 0 answers TERM with exit 3 of its own: not what the stop sent.
  EXPECT_TRUE(r.verdict.worker_ended(exit_of(0, exited(3)), {}, r.t0));
  r.verdict.worker_ended(exit_of(1, killed_by(SIGTERM)), {}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 3);
  ASSERT_TRUE(o.first_failure);
  EXPECT_EQ(o.first_failure->rank, 0);
  EXPECT_TRUE(o.stopped);
}

TEST(JobVerdict, TwoStopsEscalateToTermThenThreeToKill) {
  Round r;
  r.verdict.stop_from_outside(SIGINT, 0, "", "T", r.t0);
  r.verdict.stop_from_outside(SIGINT, 0, "", "T", r.t0 + seconds(1));
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGINT, SIGCONT, SIGTERM}));
  EXPECT_EQ(*r.verdict.deadline(), r.t0 + seconds(31));  // a new grace for TERM
  r.verdict.stop_from_outside(SIGINT, 0, "", "T", r.t0 + seconds(2));
  EXPECT_EQ(r.effects.signals.back(), SIGKILL);
  EXPECT_TRUE(r.verdict.killed());
}

TEST(JobVerdict, AStopDuringAFailuresTeardownSendsNoSecondTerm) {
  // mpirun's TERM to every launcher after one rank failed: named, but the workers keep the
  // grace they had and get no second TERM.
  Round r(/*member=*/2);
  r.effects.first_in_job.push_back(failure_on_node(3, 3, 9));
  r.verdict.peer_news({failure_on_node(3, 3, 9), false, {}}, r.t0);
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGTERM}));
  r.verdict.stop_from_outside(SIGTERM, 77, "mpirun", "T", r.t0 + seconds(1));
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGTERM}));
  EXPECT_EQ(*r.verdict.deadline(), r.t0 + seconds(30));
  r.verdict.worker_ended(exit_of(0, killed_by(SIGTERM)), {}, r.t0);
  r.verdict.worker_ended(exit_of(1, killed_by(SIGTERM)), {}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 9);  // the job's first failure, not the stop
  ASSERT_TRUE(o.remote_failure);
  EXPECT_EQ(o.remote_failure->rank, 3);
  ASSERT_TRUE(o.stopped);
  EXPECT_EQ(o.stopped->sender, "mpirun");
  EXPECT_TRUE(o.stopped->during_teardown);
  EXPECT_EQ(o.stopped->passed_on, 0);  // they had TERM already
  EXPECT_FALSE(o.first_failure);
}

TEST(JobVerdict, AnIntDuringAFailuresTeardownIsPassedOnAndNamed) {
  Round r;
  r.verdict.worker_ended(exit_of(0, exited(3)), {}, r.t0);
  r.verdict.stop_from_outside(SIGINT, 7, "bash", "T", r.t0);
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGTERM, SIGINT}));
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 3);
  ASSERT_TRUE(o.stopped);
  EXPECT_TRUE(o.stopped->during_teardown);
  EXPECT_EQ(o.stopped->passed_on, SIGINT);
}

// mpirun's SIGKILL of the launcher after its TERM: the stop's report says so.
TEST(JobVerdict, TheGuardianKilledDuringAStopIsNamedInIt) {
  Round r;
  r.verdict.worker_ended(exit_of(0, exited(3)), {}, r.t0);
  r.verdict.stop_from_outside(SIGTERM, 7, "mpirun", "T1", r.t0);
  r.verdict.guardian_lost("T2", false, r.t0 + seconds(1));
  r.verdict.worker_ended(exit_of(1, killed_by(SIGKILL)), {}, r.t0 + seconds(1));
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 3);
  ASSERT_TRUE(o.stopped);
  EXPECT_EQ(o.stopped->launcher_killed_at, "T2");
  EXPECT_EQ(o.stopped->killed_after_grace, 1);
}

TEST(JobVerdict, AnotherNodesStopIsTheOneNamedWhenBothAreStopped) {
  Round r(/*member=*/1);
  r.verdict.peer_news({stop_on_node(0, SIGTERM), false, {}}, r.t0);
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGTERM}));
  // Slurm's TERM reaches this node too, a moment later: the first stays named, no escalation.
  r.verdict.stop_from_outside(SIGTERM, 1, "slurmstepd", "T", r.t0);
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGTERM}));
  RunOutcome o = r.verdict.final_outcome();
  ASSERT_TRUE(o.stopped);
  EXPECT_EQ(o.stopped->node_rank, 0);
  EXPECT_TRUE(o.stopped->also_here);
  EXPECT_EQ(o.exit_code, 128 + SIGTERM);
}

TEST(JobVerdict, ThisNodesStopHeardAfterAnothersReportNamesTheOther) {
  Round r(/*member=*/1);
  r.effects.first_in_job.push_back(stop_on_node(0, SIGHUP));  // the store had node 0's first
  r.verdict.stop_from_outside(SIGTERM, 1, "init", "T", r.t0);
  ASSERT_EQ(r.effects.reports.size(), 1u);
  EXPECT_EQ(r.effects.reports[0].stop_signal, SIGTERM);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.stopped->signal, SIGHUP);
  EXPECT_EQ(o.stopped->node_rank, 0);
  EXPECT_TRUE(o.stopped->also_here);
  EXPECT_EQ(o.exit_code, 128 + SIGHUP);
}

TEST(JobVerdict, AStopFromAnotherNodeDuringAFailureKeepsTheFailure) {
  Round r(/*member=*/0);
  r.verdict.worker_ended(
      exit_of(1, exited(5)), [] { return std::vector<std::string>{"boom"}; }, r.t0);
  ASSERT_EQ(r.effects.reports.size(), 1u);
  EXPECT_EQ(r.effects.reports[0].stderr_tail, std::vector<std::string>{"boom"});
  r.verdict.peer_news({stop_on_node(1, SIGINT), false, {}}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 5);
  EXPECT_FALSE(o.stopped);
}

TEST(JobVerdict, AnotherNodesFailureReportedFirstIsTheJobsOwn) {
  Round r(/*member=*/1);
  r.effects.first_in_job.push_back(failure_on_node(0, 0, 11));
  EXPECT_TRUE(r.verdict.worker_ended(exit_of(2, exited(4)), {}, r.t0));
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 11);  // one verdict: the first reported in the job
  ASSERT_TRUE(o.remote_failure);
  EXPECT_EQ(o.remote_failure->node_rank, 0);
  ASSERT_TRUE(o.first_failure);  // this node's own, second
}

TEST(JobVerdict, OwnFailureHeardBackChangesNothing) {
  Round r(/*member=*/1);
  r.verdict.worker_ended(exit_of(2, exited(4)), {}, r.t0);
  r.verdict.peer_news({failure_on_node(1, 2, 4), false, {}}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_FALSE(o.remote_failure);
  EXPECT_EQ(o.exit_code, 4);
  EXPECT_TRUE(r.verdict.peers_done());
}

TEST(JobVerdict, TheGuardianLostKillsAtOnceAndTellsThePeers) {
  Round r(/*member=*/1);
  r.verdict.guardian_lost("T", false, r.t0);
  EXPECT_EQ(r.effects.signals, (std::vector<int>{SIGCONT, SIGKILL, SIGKILL}));
  ASSERT_EQ(r.effects.reports.size(), 1u);
  EXPECT_EQ(r.effects.reports[0].stop_signal, SIGKILL);
  r.verdict.worker_ended(exit_of(0, killed_by(SIGKILL)), {}, r.t0);
  r.verdict.worker_ended(exit_of(1, killed_by(SIGKILL)), {}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, 128 + SIGKILL);
  ASSERT_TRUE(o.stopped);
  EXPECT_TRUE(o.stopped->guardian_killed);
  EXPECT_EQ(o.stopped->killed_after_grace, 2);
  EXPECT_FALSE(o.first_failure);
}

// Another node lost (its tripwire heard at once), this node's workers gone at its TERM, and
// then its own launcher killed before the round ended: that is this node's loss too. Before,
// no stop was kept (no worker alive): the launcher went on with no restart and ended the
// elastic job for every node with the loss it had heard.
TEST(JobVerdict, TheGuardianLostAfterATeardownsWorkersEndedIsTheGuardiansLoss) {
  Round r(/*member=*/1);
  r.verdict.peer_news({lost_launcher(0, "it died"), false, {}}, r.t0);
  r.verdict.worker_ended(exit_of(0, killed_by(SIGTERM)), {}, r.t0);
  r.verdict.worker_ended(exit_of(1, killed_by(SIGTERM)), {}, r.t0);
  ASSERT_EQ(r.verdict.alive(), 0);
  r.verdict.guardian_lost("T", false, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  ASSERT_TRUE(o.stopped);
  EXPECT_TRUE(o.stopped->guardian_killed);
  EXPECT_TRUE(o.stop_requested);
  EXPECT_EQ(o.exit_code, 128 + SIGKILL);
  ASSERT_TRUE(o.remote_failure);  // still named: what it was tearing down for
}

// Killed while a notice's drain ran: its summary and events said 200 (preempted), and the
// launcher went with 137 (the campaign's etcd 303).
TEST(JobVerdict, TheGuardianLostAfterANoticeExits137AsItDoes) {
  Round r(/*member=*/1);
  r.verdict.notice_heard(preempt(), std::nullopt);
  r.verdict.guardian_lost("T", false, r.t0);
  r.verdict.worker_ended(exit_of(0, killed_by(SIGKILL)), {}, r.t0);
  r.verdict.worker_ended(exit_of(1, killed_by(SIGKILL)), {}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  ASSERT_TRUE(o.notice);
  EXPECT_EQ(o.exit_code, 128 + SIGKILL);
}

TEST(JobVerdict, TheGuardianLostDuringAStopKeepsTheStopNamed) {
  Round r;
  r.verdict.stop_from_outside(SIGTERM, 5, "kubelet", "T", r.t0);
  r.verdict.guardian_lost("T", false, r.t0);
  EXPECT_EQ(r.verdict.final_outcome().stopped->signal, SIGTERM);
  EXPECT_TRUE(r.verdict.killed());
}

TEST(JobVerdict, AFailureWhileTheRanksAreLookedAtComesFirst) {
  Round r;
  r.verdict.hang_phase(HangPhase::looking);
  EXPECT_TRUE(r.verdict.worker_ended(exit_of(0, exited(2)), {}, r.t0));
  EXPECT_EQ(r.verdict.final_outcome().exit_code, 2);
}

TEST(JobVerdict, RanksGivenSigabrtForTheirStacksDieOfTheHang) {
  Round r;
  r.verdict.hang_phase(HangPhase::committed);
  EXPECT_FALSE(r.verdict.worker_ended(exit_of(0, killed_by(SIGABRT)), {}, r.t0));
  HangReport report;
  report.verdict = "rank 1 is in x";
  r.verdict.hang_found(report, r.t0);
  r.verdict.worker_ended(exit_of(1, killed_by(SIGTERM)), {}, r.t0);
  RunOutcome o = r.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, kHangExitCode);
  EXPECT_FALSE(o.first_failure);
  ASSERT_TRUE(o.hang);
}

TEST(JobVerdict, AStopWhileTheRanksAreLookedAtIsAStop) {
  Round r;
  r.verdict.hang_phase(HangPhase::looking);
  r.verdict.stop_from_outside(SIGINT, 0, "", "T", r.t0);
  r.verdict.hang_phase(HangPhase::none);  // the round calls the inquiry off
  r.verdict.worker_ended(exit_of(0, killed_by(SIGINT)), {}, r.t0);
  r.verdict.worker_ended(exit_of(1, killed_by(SIGINT)), {}, r.t0);
  EXPECT_EQ(r.verdict.final_outcome().exit_code, 130);
}

TEST(JobVerdict, AnotherNodesFailureWhileLookingIsTheJobsButNotOnceCommitted) {
  Round looking(/*member=*/0);
  looking.verdict.hang_phase(HangPhase::looking);
  looking.verdict.peer_news({failure_on_node(1, 3, 6), false, {}}, looking.t0);
  EXPECT_EQ(looking.verdict.final_outcome().exit_code, 6);

  Round committed(/*member=*/0);
  committed.verdict.hang_phase(HangPhase::committed);
  committed.verdict.peer_news({failure_on_node(1, 3, 6), false, {}}, committed.t0);
  EXPECT_FALSE(committed.verdict.final_outcome().remote_failure);
  EXPECT_FALSE(committed.verdict.tearing_down());
}

TEST(JobVerdict, ANodeWaitsForItsPeersOnlyAfterAllWentWell) {
  Round r(/*member=*/1);
  r.verdict.worker_ended(exit_of(0, exited(0)), {}, r.t0);
  r.verdict.worker_ended(exit_of(1, exited(0)), {}, r.t0);
  EXPECT_TRUE(r.verdict.waiting_for_peers());
  r.verdict.peer_news({std::nullopt, true, {}}, r.t0);  // every node finished
  EXPECT_FALSE(r.verdict.waiting_for_peers());
  EXPECT_EQ(r.verdict.final_outcome().exit_code, 0);
}

TEST(JobVerdict, AWorkerThatCannotStartExits127) {
  Round r(-1, 1);
  r.verdict.start_failed(invalid("python4", "argv[0]", "a program"), r.t0);
  EXPECT_EQ(r.verdict.final_outcome().exit_code, 127);
  EXPECT_TRUE(r.verdict.tearing_down());
}

}  // namespace
}  // namespace aml

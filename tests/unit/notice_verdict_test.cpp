// The round's decisions when a notice of the job's end comes (issue 55), fed with events, no
// process: workers that finish after it end the job as preempted, those still running at its
// deadline less the grace are stopped then (no failure), a real failure stays one.
#include <gtest/gtest.h>
#include <signal.h>

#include "notice/notice_desk.hpp"
#include "supervisor/job_verdict.hpp"
#include "verdict_events.hpp"

namespace aml::notice_verdict_test {
namespace {

using Clock = JobVerdict::Clock;
using std::chrono::seconds;

using verdict_events::exit_of;
using verdict_events::exited;
using verdict_events::failure_on_node;
using verdict_events::lost_launcher;
using verdict_events::preempt;
using verdict_events::Recorder;

struct Fixture {
  Fixture() : verdict(effects, seconds(25), -1) {
    verdict.worker_started();
    verdict.worker_started();
  }
  Recorder effects;
  JobVerdict verdict;
  Clock::time_point t0 = Clock::now();
};

TEST(NoticeVerdict, WorkersThatFinishAfterANoticeEndTheJobPreempted) {
  Fixture f;
  f.verdict.notice_heard(preempt(), f.t0 + seconds(5));
  EXPECT_FALSE(f.verdict.worker_ended(exit_of(0, exited(0)), {}, f.t0 + seconds(1)));
  EXPECT_FALSE(f.verdict.worker_ended(exit_of(1, exited(0)), {}, f.t0 + seconds(2)));
  const RunOutcome o = f.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, kPreemptedExitCode);
  ASSERT_TRUE(o.notice);
  EXPECT_EQ(o.notice->event_id, "E1");
  EXPECT_FALSE(o.stopped_at_notice_deadline);
  EXPECT_TRUE(f.effects.signals.empty());
}

TEST(NoticeVerdict, WorkersStillRunningAtTheDeadlineAreStoppedThenAndThatIsNoFailure) {
  Fixture f;
  f.verdict.notice_heard(preempt(), f.t0 + seconds(5));
  ASSERT_TRUE(f.verdict.deadline());
  EXPECT_EQ(*f.verdict.deadline(), f.t0 + seconds(5));
  f.verdict.tick(f.t0 + seconds(4));
  EXPECT_TRUE(f.effects.signals.empty());
  f.verdict.tick(f.t0 + seconds(5));
  EXPECT_EQ(f.effects.signals, (std::vector<int>{SIGCONT, SIGTERM}));
  EXPECT_EQ(*f.verdict.deadline(), f.t0 + seconds(30));  // then the grace, then SIGKILL
  EXPECT_FALSE(f.verdict.worker_ended(exit_of(0, SIGTERM), {}, f.t0 + seconds(6)));
  f.verdict.tick(f.t0 + seconds(30));
  EXPECT_EQ(f.effects.signals.back(), SIGKILL);
  EXPECT_FALSE(f.verdict.worker_ended(exit_of(1, SIGKILL), {}, f.t0 + seconds(30)));
  const RunOutcome o = f.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, kPreemptedExitCode);
  EXPECT_TRUE(o.stopped_at_notice_deadline);
  EXPECT_FALSE(o.first_failure);
}

TEST(NoticeVerdict, AWorkerThatDiesOfTheNoticesSignalEndedForTheNotice) {
  Fixture f;
  f.verdict.notice_heard(preempt(), std::nullopt, SIGUSR1);
  EXPECT_FALSE(f.verdict.worker_ended(exit_of(0, SIGUSR1), {}, f.t0));  // no handler of it
  EXPECT_FALSE(f.verdict.worker_ended(exit_of(1, exited(0)), {}, f.t0));
  EXPECT_EQ(f.verdict.final_outcome().exit_code, kPreemptedExitCode);
  Fixture g;  // without a notice, a death of SIGUSR1 is a failure as ever
  EXPECT_TRUE(g.verdict.worker_ended(exit_of(0, SIGUSR1), {}, g.t0));
  EXPECT_EQ(g.verdict.final_outcome().exit_code, 128 + SIGUSR1);
}

TEST(NoticeVerdict, AFailureAfterTheNoticeIsStillAFailure) {
  Fixture f;
  f.verdict.notice_heard(preempt(), std::nullopt);
  EXPECT_FALSE(f.verdict.deadline());  // no time said: no stop of the launcher's own
  EXPECT_TRUE(f.verdict.worker_ended(exit_of(1, exited(3)), {}, f.t0));
  EXPECT_EQ(f.verdict.final_outcome().exit_code, 3);
}

// A node lost after the notice (bug 10 of the fault campaign): the job ended with 1, which a
// scheduler does not retry, for what was the machines' doing; the loss is named beside it.
TEST(NoticeVerdict, ANodeLostAfterTheNoticeStillEndsTheJobPreemptedAndIsNamed) {
  Fixture f;
  f.verdict.notice_heard(preempt(), std::nullopt);
  f.verdict.peer_news({lost_launcher(2, "no heartbeat for over 10 s"), false, {}}, f.t0);
  f.verdict.worker_ended(exit_of(0, SIGTERM), {}, f.t0);
  f.verdict.worker_ended(exit_of(1, SIGTERM), {}, f.t0);
  const RunOutcome o = f.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, kPreemptedExitCode);
  ASSERT_TRUE(o.remote_failure);
  EXPECT_TRUE(o.remote_failure->launcher_lost());
}

// The fault campaigns' etcd 312: etcd out of this node's reach past --node-timeout while it
// drained a notice (a member killed, another's host paused): it ended 1 where every other node
// ended 200.
TEST(NoticeVerdict, TheRendezvousLostAfterTheNoticeStillEndsTheJobPreemptedAndIsNamed) {
  Fixture f;
  f.verdict.notice_heard(preempt(), std::nullopt);
  JobFailure etcd_lost;
  etcd_lost.node_rank = -1;
  etcd_lost.member = -1;
  etcd_lost.exit_code = 1;
  etcd_lost.host = "etcd at 10.0.0.1:2379";
  etcd_lost.status = std::string(JobFailure::kRendezvousLost) +
                     ": etcd at 10.0.0.1:2379 could not be reached for --node-timeout 10 s";
  f.verdict.peer_news({etcd_lost, false, {}}, f.t0);
  f.verdict.worker_ended(exit_of(0, SIGTERM), {}, f.t0);
  f.verdict.worker_ended(exit_of(1, SIGTERM), {}, f.t0);
  const RunOutcome o = f.verdict.final_outcome();
  EXPECT_EQ(o.exit_code, kPreemptedExitCode);
  ASSERT_TRUE(o.remote_failure);
  EXPECT_TRUE(o.remote_failure->rendezvous_lost());
}

// The campaign's etcd 305: after the notice, node 0 lost (reported first in the job), then a
// worker here killed: this node ended 1 where every other ended 200 naming the same loss.
TEST(NoticeVerdict, AWorkerFailedHereAfterANodeLostFirstEndsPreemptedAsTheOthersDo) {
  Recorder effects;
  JobVerdict verdict(effects, seconds(25), /*member=*/1);
  verdict.worker_started();
  verdict.notice_heard(preempt(), std::nullopt);
  effects.first_in_job.push_back(lost_launcher(0, "its etcd lease ended"));  // etcd had it first
  const Clock::time_point t0 = Clock::now();
  EXPECT_TRUE(verdict.worker_ended(exit_of(0, SIGKILL), {}, t0));
  const RunOutcome o = verdict.final_outcome();
  ASSERT_TRUE(o.remote_failure);
  EXPECT_TRUE(o.remote_failure->launcher_lost());
  ASSERT_TRUE(o.first_failure);  // its own, second, still named
  EXPECT_EQ(o.exit_code, kPreemptedExitCode);
}

// The round had failed before the notice came (a spare seated late into a round that had
// failed, its machine's notice standing: the campaign's etcd 308): run_workers ends this node
// preempted where a restart is left, since the others go on without it. A failure after the
// notice is not one before it.
TEST(NoticeVerdict, AFailureBeforeTheNoticeIsToldApartFromOneAfter) {
  Fixture before;
  const JobFailure failed = failure_on_node(0, 0, 137);
  before.verdict.peer_news({failed, false, {}}, before.t0);
  before.verdict.notice_heard(preempt(), std::nullopt);
  EXPECT_TRUE(before.verdict.final_outcome().failed_before_notice);
  Fixture after;
  after.verdict.notice_heard(preempt(), std::nullopt);
  after.verdict.peer_news({failed, false, {}}, after.t0);
  const RunOutcome o = after.verdict.final_outcome();
  EXPECT_FALSE(o.failed_before_notice);
  EXPECT_EQ(o.exit_code, 137);
}

TEST(NoticeVerdict, AWorkerFailedOnAnotherNodeAfterTheNoticeIsStillAFailure) {
  Fixture f;
  f.verdict.notice_heard(preempt(), std::nullopt);
  f.verdict.peer_news({failure_on_node(2, 5, 3), false, {}}, f.t0);
  f.verdict.worker_ended(exit_of(0, SIGTERM), {}, f.t0);
  f.verdict.worker_ended(exit_of(1, SIGTERM), {}, f.t0);
  EXPECT_EQ(f.verdict.final_outcome().exit_code, 3);
}

TEST(NoticeVerdict, TheSchedulersTermAfterTheNoticeIsThePreemption) {
  Fixture f;
  f.verdict.notice_heard(preempt(), std::nullopt);
  f.verdict.stop_from_outside(SIGTERM, 1, "kubelet", "T", f.t0);
  f.verdict.worker_ended(exit_of(0, SIGTERM), {}, f.t0);
  f.verdict.worker_ended(exit_of(1, exited(0)), {}, f.t0);
  EXPECT_EQ(f.verdict.final_outcome().exit_code, kPreemptedExitCode);
}

TEST(NoticeVerdict, AFreezeEndsNothing) {
  Fixture f;
  Notice freeze = preempt();
  freeze.kind = NoticeKind::freeze;
  f.verdict.notice_heard(freeze, f.t0);
  f.verdict.tick(f.t0 + seconds(10));
  EXPECT_TRUE(f.effects.signals.empty());
  f.verdict.worker_ended(exit_of(0, exited(0)), {}, f.t0);
  f.verdict.worker_ended(exit_of(1, exited(0)), {}, f.t0);
  EXPECT_EQ(f.verdict.final_outcome().exit_code, 0);
  EXPECT_FALSE(f.verdict.final_outcome().notice);
}

}  // namespace
}  // namespace aml::notice_verdict_test

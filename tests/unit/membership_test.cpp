// An elastic round's members and their node ranks, and when node 0 starts the round.
#include "rendezvous/membership.hpp"

#include <gtest/gtest.h>

namespace aml {
namespace {

using std::chrono::milliseconds;

TEST(ChooseMembers, FirstRoundNodeZeroThenInTheOrderTheyCame) {
  Membership m = choose_members({{5, -1}, {0, -1}, {3, -1}}, 4);
  EXPECT_EQ(m.by_rank, (std::vector<long>{0, 5, 3}));
  EXPECT_TRUE(m.spares.empty());
}

TEST(ChooseMembers, WithoutTheStoresHostTheFirstToComeIsNodeZero) {
  // Node 0's store's host (launcher 0) sits the round out: no seat is kept for it.
  Membership m = choose_members({{5, -1}, {3, -1}}, 4);
  EXPECT_EQ(m.by_rank, (std::vector<long>{5, 3}));
  // The round after: the member at node rank 0 keeps it, the spare come since takes rank 1.
  m = choose_members({{8, -1}, {5, 0}}, 4);
  EXPECT_EQ(m.by_rank, (std::vector<long>{5, 8}));
}

TEST(ChooseMembers, TheStoresHostSeatedAgainIsNodeZero) {
  // It sat out a round (ranks 0 and 1 were 5 and 3) and is seated again: node 0 is its, and
  // the member that had node rank 0 moves to the free rank.
  Membership m = choose_members({{5, 0}, {3, 1}, {0, -1}}, 3);
  EXPECT_EQ(m.by_rank, (std::vector<long>{0, 3, 5}));
}

TEST(ChooseMembers, BeyondTheMostNodesWaitAsSpares) {
  Membership m = choose_members({{0, -1}, {1, -1}, {2, -1}}, 2);
  EXPECT_EQ(m.by_rank, (std::vector<long>{0, 1}));
  EXPECT_EQ(m.spares, (std::vector<long>{2}));
}

TEST(ChooseMembers, SurvivorsKeepTheirRanksAndASpareTakesTheLostOnes) {
  // Round of 3: ids 0, 1, 2 at ranks 0, 1, 2; id 1 was lost; spare 7 waited.
  Membership m = choose_members({{7, -1}, {2, 2}, {0, 0}}, 3);
  EXPECT_EQ(m.by_rank, (std::vector<long>{0, 7, 2}));
  EXPECT_TRUE(m.spares.empty());
}

TEST(ChooseMembers, ShrinkingKeepsRanksBelowTheNewCount) {
  // Round of 3 lost rank 2: ranks 0 and 1 stay.
  Membership m = choose_members({{1, 1}, {0, 0}}, 4);
  EXPECT_EQ(m.by_rank, (std::vector<long>{0, 1}));
}

TEST(ChooseMembers, AMemberAboveTheNewCountMovesIntoTheGap) {
  // Round of 3 lost rank 1, no spare: rank 2 becomes 1 (a world of 2 has no rank 2).
  Membership m = choose_members({{2, 2}, {0, 0}}, 4);
  EXPECT_EQ(m.by_rank, (std::vector<long>{0, 2}));
}

TEST(ChooseMembers, LastRoundsMembersComeBeforeNewcomersForTheSeats) {
  // 2 seats: a newcomer that came first does not push out a member of the last round.
  Membership m = choose_members({{9, -1}, {0, 0}, {4, 1}}, 2);
  EXPECT_EQ(m.by_rank, (std::vector<long>{0, 4}));
  EXPECT_EQ(m.spares, (std::vector<long>{9}));
}

TEST(ChooseMembers, RanksAreAPermutation) {
  std::vector<Candidate> joined = {{0, 0}, {11, 5}, {12, -1}, {13, 3}, {14, -1}, {15, 1}};
  Membership m = choose_members(joined, 5);
  ASSERT_EQ(m.by_rank.size(), 5u);
  EXPECT_EQ(m.by_rank[0], 0);
  EXPECT_EQ(m.by_rank[3], 13);  // kept
  EXPECT_EQ(m.by_rank[1], 15);  // kept
  EXPECT_EQ(m.spares, (std::vector<long>{14}));
  std::vector<long> sorted = m.by_rank;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<long>{0, 11, 12, 13, 15}));
}

RoundCount count(int joined, int awaited, int since_start_ms, int since_arrival_ms) {
  return RoundCount{joined, awaited, milliseconds(since_start_ms), milliseconds(since_arrival_ms)};
}

const RoundTimes kTimes{milliseconds(3000), milliseconds(10000), milliseconds(60000)};

TEST(WhenToStart, TheMostNodesStartAtOnce) {
  EXPECT_EQ(when_to_start(count(4, 0, 10, 0), {2, 4}, kTimes), RoundStart::now);
}

TEST(WhenToStart, EnoughNodesWaitForTheLastCall) {
  EXPECT_EQ(when_to_start(count(3, 0, 5000, 2999), {2, 4}, kTimes), RoundStart::wait);
  EXPECT_EQ(when_to_start(count(3, 0, 5000, 3000), {2, 4}, kTimes), RoundStart::now);
}

TEST(WhenToStart, LastRoundsMembersOnTheirWayAreWaitedForUpToTheNodeTimeout) {
  EXPECT_EQ(when_to_start(count(4, 1, 5000, 5000), {2, 4}, kTimes), RoundStart::wait);
  EXPECT_EQ(when_to_start(count(3, 1, 5000, 5000), {2, 4}, kTimes), RoundStart::wait);
  EXPECT_EQ(when_to_start(count(3, 1, 10000, 5000), {2, 4}, kTimes), RoundStart::now);
}

TEST(WhenToStart, TooFewWaitUntilTheRendezvousTimeout) {
  EXPECT_EQ(when_to_start(count(1, 0, 59999, 59999), {2, 4}, kTimes), RoundStart::wait);
  EXPECT_EQ(when_to_start(count(1, 0, 60000, 60000), {2, 4}, kTimes), RoundStart::too_few);
}

}  // namespace
}  // namespace aml

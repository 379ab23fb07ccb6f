// The straggler check's measure and its watch (--straggler-check): lateness at each call that
// every rank of a group had, the step's period from the calls that come again, the crossing
// form between nodes, and who is named after how many samples. A real dump torch 2.15 wrote
// (tests/fixtures/flight-recorder) and hand-made timings.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "fixture_paths.hpp"
#include "flight/pickle_subset.hpp"
#include "flight/rank_lateness.hpp"
#include "flight/straggler_watch.hpp"

namespace aml {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kStart = 1'764'000'000 * kSecond;

// `steps` steps `step` apart, one all_reduce each (mark 7), the rank `late` after the others.
RankCalls steady_rank(int rank, int steps, double step, double late, int first_seq = 1) {
  RankCalls r;
  r.rank = rank;
  GroupDigest g;
  g.id = "0";
  g.desc = "default_pg";
  for (int s = first_seq; s <= steps; ++s) {
    g.recent.push_back({s, kStart + static_cast<std::int64_t>((s * step + late) * kSecond), 7});
  }
  r.groups.push_back(g);
  return r;
}

std::vector<GroupDigest> real_dump(const std::string& name, RecentCalls recent) {
  std::ifstream in(std::string(test::flight_recorder_fixtures()) + "/" + name, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto value = read_pickle_subset(bytes);
  EXPECT_TRUE(value) << value.error().message();
  auto groups = digest_flight_dump(*value, 16, recent);
  EXPECT_TRUE(groups) << groups.error().message();
  return groups ? *groups : std::vector<GroupDigest>{};
}

TEST(RankLateness, RealDumpsKeepTheCompletedCallsOfEachGroup) {
  // Rank 0 enqueued all_reduce #3 of the default group; it never completed: not compared.
  std::vector<RankCalls> ranks(2);
  for (int r = 0; r < 2; ++r) {
    ranks[r].rank = r;
    ranks[r].groups = real_dump("behind/rank_" + std::to_string(r) + ".pkl", {16});
  }
  ASSERT_EQ(ranks[0].groups.size(), 2u);
  ASSERT_EQ(ranks[0].groups[0].recent.size(), 2u);
  EXPECT_EQ(ranks[0].groups[0].recent.back().seq, 2);
  EXPECT_EQ(ranks[0].groups[0].enqueued.seq, 3);  // the hang's digest is as before
  EXPECT_EQ(ranks[1].groups[0].recent.size(), 2u);
  EXPECT_EQ(ranks[0].groups[1].recent.size(), 1u);
  // The same call is marked the same on both ranks.
  EXPECT_EQ(ranks[0].groups[0].recent[0].mark, ranks[1].groups[0].recent[0].mark);
  EXPECT_NE(ranks[0].groups[0].recent[0].mark, ranks[0].groups[1].recent[0].mark);
  const LatenessSample sample = measure_lateness(ranks);
  EXPECT_EQ(sample.compared, 3);
  ASSERT_EQ(sample.ranks.size(), 2u);
  EXPECT_EQ(sample.ranks[0].calls, 3);
  // Nothing is kept without asking, nor past the cut-off.
  EXPECT_TRUE(real_dump("behind/rank_0.pkl", {}).at(0).recent.empty());
  EXPECT_TRUE(real_dump("behind/rank_0.pkl", {16, 0}).at(0).recent.empty());
  // A sample sees what came after the last sample's cut-off: the first call was seen then.
  const std::int64_t first = ranks[0].groups[0].recent[0].created_ns;
  const auto after = real_dump("behind/rank_0.pkl", {16, INT64_MAX, first});
  ASSERT_EQ(after.at(0).recent.size(), 1u);
  EXPECT_EQ(after[0].recent[0].seq, 2);
}

TEST(RankLateness, ALateRankIsLastByItsLatenessAgainstTheStep) {
  const LatenessSample sample = measure_lateness(
      {steady_rank(0, 10, 0.5, 0), steady_rank(1, 10, 0.5, 0.3), steady_rank(2, 10, 0.5, 0.01)});
  EXPECT_EQ(sample.compared, 10);
  ASSERT_EQ(sample.ranks.size(), 3u);
  ASSERT_GE(sample.last, 0);
  EXPECT_EQ(sample.ranks[sample.last].rank, 1);
  EXPECT_NEAR(sample.ranks[sample.last].seconds, 0.3, 1e-6);
  EXPECT_NEAR(sample.ranks[0].seconds, 0.0, 1e-6);
  EXPECT_NEAR(sample.step_seconds, 0.5, 1e-6);
  EXPECT_NEAR(sample.share(), 0.6, 1e-6);
}

TEST(RankLateness, OnlyCallsEveryRankHadAreCompared) {
  // Rank 2's window begins later (its dump came later): its missing calls are no lateness.
  const LatenessSample sample = measure_lateness(
      {steady_rank(0, 10, 0.5, 0), steady_rank(1, 10, 0.5, 0), steady_rank(2, 10, 0.5, 0.2, 6)});
  EXPECT_EQ(sample.compared, 5);
  EXPECT_EQ(sample.ranks[sample.last].rank, 2);
  EXPECT_EQ(sample.ranks[sample.last].calls, 5);
  // A group only one rank holds compares nothing.
  EXPECT_EQ(measure_lateness({steady_rank(0, 10, 0.5, 0)}).compared, 0);
  EXPECT_LT(measure_lateness({steady_rank(0, 10, 0.5, 0)}).last, 0);
}

TEST(RankLateness, TheStepIsTheGapBetweenCallsThatComeAgain) {
  // Each 1 s step: a bucket's all_reduce at 0 s, another of other sizes at 0.1 s.
  std::vector<RankCalls> ranks;
  for (int r = 0; r < 2; ++r) {
    RankCalls rank;
    rank.rank = r;
    GroupDigest g;
    g.id = "0";
    for (int s = 0; s < 8; ++s) {
      const std::int64_t at = kStart + s * kSecond + (r == 1 ? kSecond / 5 : 0);
      g.recent.push_back({2 * s + 1, at, 1});
      g.recent.push_back({2 * s + 2, at + kSecond / 10, 2});
    }
    rank.groups.push_back(g);
    ranks.push_back(rank);
  }
  const LatenessSample sample = measure_lateness(ranks);
  EXPECT_NEAR(sample.step_seconds, 1.0, 1e-6);
  EXPECT_NEAR(sample.share(), 0.2, 1e-6);
}

TEST(RankLateness, TheCrossingFormShiftsToTheJobsClock) {
  std::vector<RankCalls> node1 = {steady_rank(2, 6, 0.25, 0), steady_rank(3, 6, 0.25, 0.1)};
  node1[0].node = node1[1].node = 1;
  const nlohmann::json wire = rank_calls_json(node1, -3 * kSecond);
  EXPECT_LT(wire.dump().size(), 400u);
  const auto back = rank_calls_from_json(nlohmann::json::parse(wire.dump()));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].rank, 3);
  EXPECT_EQ(back[1].node, 1);
  ASSERT_EQ(back[1].groups.at(0).recent.size(), 6u);
  EXPECT_EQ(back[1].groups[0].desc, "default_pg");
  EXPECT_EQ(back[1].groups[0].recent[2].seq, 3);
  EXPECT_EQ(back[1].groups[0].recent[2].created_ns,
            node1[1].groups[0].recent[2].created_ns - 3 * kSecond);
  EXPECT_EQ(back[1].groups[0].recent[2].mark, 7u);
  // What is not as written is left out, not trusted.
  const auto odd = rank_calls_from_json(
      nlohmann::json::parse(R"([{"rank":"x"},{"rank":4,"groups":[{"id":"0","t0":"y","calls":[]},)"
                            R"({"id":"0","t0":5,"calls":[[1,2],[1,"a",3],[2,10,4]]}]}, 7])"));
  ASSERT_EQ(odd.size(), 1u);
  ASSERT_EQ(odd[0].groups.size(), 1u);
  ASSERT_EQ(odd[0].groups[0].recent.size(), 1u);
  EXPECT_EQ(odd[0].groups[0].recent[0].created_ns, 5 + 10'000);
  EXPECT_TRUE(rank_calls_from_json(nlohmann::json("text")).empty());
}

LatenessSample late_sample(int late_rank, double lateness) {
  return measure_lateness({steady_rank(0, 10, 0.5, late_rank == 0 ? lateness : 0),
                           steady_rank(1, 10, 0.5, late_rank == 1 ? lateness : 0),
                           steady_rank(2, 10, 0.5, late_rank == 2 ? lateness : 0)});
}

TEST(StragglerWatch, NamedAfterThreeOfFiveSamplesAndOnce) {
  StragglerWatch watch(0.2);
  EXPECT_FALSE(watch.add(late_sample(1, 0.3)));
  EXPECT_FALSE(watch.add(late_sample(2, 0.01)));  // a moment's noise, below the share
  EXPECT_FALSE(watch.add(late_sample(1, 0.3)));
  auto named = watch.add(late_sample(1, 0.25));
  ASSERT_TRUE(named);
  EXPECT_EQ(named->rank.rank, 1);
  EXPECT_EQ(named->times, 3u);
  EXPECT_EQ(named->of, 4u);
  EXPECT_NEAR(named->share, 0.5, 1e-6);
  EXPECT_FALSE(watch.add(late_sample(1, 0.3)));  // once
  // It catches up; later it is late again: named again.
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(watch.add(late_sample(0, 0.0)));
  EXPECT_FALSE(watch.add(late_sample(1, 0.3)));
  EXPECT_FALSE(watch.add(late_sample(1, 0.3)));
  EXPECT_TRUE(watch.add(late_sample(1, 0.3)));
}

TEST(StragglerWatch, EqualRanksAndChangingLastOnesNameNobody) {
  StragglerWatch watch(0.2);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(watch.add(late_sample(i % 3, 0.05)));
  // Late by more than the share, but a different rank each time: noise, not a straggler.
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(watch.add(late_sample(i % 3, 0.3)));
}

}  // namespace
}  // namespace aml

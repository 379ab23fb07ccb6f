// When a waiting launcher says so (rendezvous/wait_progress.hpp): the first line 10 s after the
// wait began, then every 30 s; nothing once it ended; a dial cut into slices that end there.
#include "rendezvous/wait_progress.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace aml {
namespace {

using std::chrono::milliseconds;
using Clock = WaitProgress::Clock;

TEST(WaitProgress, FirstLineAfterTenSecondsThenEveryThirty) {
  WaitProgress progress;
  const Clock::time_point t0{};
  EXPECT_FALSE(progress.due(t0 + milliseconds(60000)));  // no wait begun: never
  progress.begin(t0);
  EXPECT_FALSE(progress.due(t0 + milliseconds(9999)));
  EXPECT_TRUE(progress.due(t0 + milliseconds(10000)));
  EXPECT_EQ(progress.slice(milliseconds(600000), t0 + milliseconds(4000)), milliseconds(6000));
  progress.said(t0 + milliseconds(10000));
  EXPECT_FALSE(progress.due(t0 + milliseconds(39999)));
  EXPECT_TRUE(progress.due(t0 + milliseconds(40000)));
  EXPECT_EQ(progress.slice(milliseconds(5000), t0 + milliseconds(10000)), milliseconds(5000));
  progress.begin(t0 + milliseconds(20000));  // begun already: the clock is kept
  EXPECT_TRUE(progress.due(t0 + milliseconds(40000)));
  progress.end();
  EXPECT_FALSE(progress.due(t0 + milliseconds(90000)));
  EXPECT_EQ(progress.slice(milliseconds(7000), t0), milliseconds(7000));
}

TEST(WaitProgress, TheReasonIsTheErrorsLastParenthesis) {
  EXPECT_EQ(last_reason("store=10.0.0.1:29500: expected a store accepting connections "
                        "(Connection refused)"),
            "Connection refused");
  EXPECT_EQ(last_reason("no parenthesis"), "no parenthesis");
}

// A dial that is refused at once (a wrong secret) is not asked again; one that runs out its
// slices is, until the total, and says so between slices.
TEST(WaitProgress, AnEarlyAnswerStandsATimedOutSliceIsTriedAgain) {
  int tries = 0;
  WaitProgress progress;
  auto refused = attempt_saying<int>(
      progress, milliseconds(5000),
      [&](milliseconds) -> Result<int> {
        ++tries;
        return invalid("store", "x", "a proof (refused: wrong job secret)");
      },
      [](const std::string&, milliseconds) {});
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(tries, 1);

  std::vector<milliseconds> slices;
  WaitProgress again;
  auto timed_out = attempt_saying<int>(
      again, milliseconds(30),
      [&](milliseconds slice) -> Result<int> {
        slices.push_back(slice);
        return invalid("store", "x", "a store accepting connections (Connection refused)");
      },
      [](const std::string&, milliseconds) {});
  EXPECT_FALSE(timed_out.ok());
  ASSERT_EQ(slices.size(), 1u);  // the whole total was shorter than the first line's wait
  EXPECT_LE(slices.front(), milliseconds(30));
}

}  // namespace
}  // namespace aml

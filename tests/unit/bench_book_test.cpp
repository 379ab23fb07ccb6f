// The bench as the launcher giving a round's seats keeps it (bench.hpp): each node benched
// once, by launcher; one the last round seated again at MIN and benched again is news.
#include <gtest/gtest.h>

#include "rendezvous/bench.hpp"

namespace aml {
namespace {

BenchedNode node(long launcher, const std::string& reason) {
  BenchedNode n;
  n.launcher = launcher;
  n.host = std::to_string(launcher);  // a number alone: gcc 12 warns on "h" + to_string
  n.reason = reason;
  return n;
}

TEST(BenchBook, ANewNodeIsBenchedAndNews) {
  BenchBook book;
  book.add(node(3, "its launcher was lost"), 4);
  ASSERT_EQ(book.bench.size(), 1u);
  ASSERT_EQ(book.added.size(), 1u);
  EXPECT_EQ(book.added[0].launcher, 3);
  EXPECT_EQ(book.bench[0].round, 4);
}

TEST(BenchBook, ABenchedNodeThatSatOutIsNotBenchedAgain) {
  BenchBook book{{node(3, "its launcher was lost")}, {}, {}, {1, 2}};
  book.add(node(3, "failed its health check"), 5);
  EXPECT_TRUE(book.added.empty());
  ASSERT_EQ(book.bench.size(), 1u);
  EXPECT_EQ(book.bench[0].reason, "its launcher was lost");
}

// Seated again where the job would have ended without it, then sick: its bench says so, and
// the deciding node tells it (a node_benched event) as for any other bench.
TEST(BenchBook, ANodeSeatedAgainAtMinAndBenchedAgainIsNews) {
  BenchBook book{
      {node(3, "its launcher was lost"), node(4, "its launcher was lost")}, {}, {}, {1, 3}};
  book.add(node(3, "failed its health check"), 6);
  ASSERT_EQ(book.added.size(), 1u);
  EXPECT_EQ(book.added[0].reason, "failed its health check");
  ASSERT_EQ(book.bench.size(), 2u);
  EXPECT_EQ(book.bench[0].reason, "failed its health check");
  EXPECT_EQ(book.bench[0].round, 6);
  // One reason a round: the way the round ended does not bench it a second time.
  book.add(node(3, "its launcher was lost"), 6);
  EXPECT_EQ(book.added.size(), 1u);
  EXPECT_EQ(book.bench[0].reason, "failed its health check");
}

}  // namespace
}  // namespace aml

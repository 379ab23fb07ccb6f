// Who the round's node 0 says joined the job, came back or moved (launcher/seat_history.hpp).
#include "seat_history.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aml {
namespace {

NodeInfo node(int node_rank, std::string host, long pid, std::string machine = "") {
  NodeInfo info;
  info.node_rank = node_rank;
  info.host = std::move(host);
  info.addr = "10.0.0." + std::to_string(pid % 250);
  info.pid = pid;
  info.machine = std::move(machine);
  return info;
}

// "node_joined b" for each piece of news, in order.
std::vector<std::string> said(const std::vector<SeatNews>& news) {
  std::vector<std::string> lines;
  for (const SeatNews& n : news) {
    lines.push_back(std::string(n.kind) + " " + n.details["host"].get<std::string>());
  }
  return lines;
}

TEST(SeatHistory, RoundZeroNamesEveryOtherNodeOnceAndARestartNobody) {
  SeatHistory seats;
  const std::vector<NodeInfo> round0{node(0, "a", 10), node(1, "b", 11), node(2, "c", 12)};
  const auto news = seats.seated(0, round0, 0);
  EXPECT_EQ(said(news), (std::vector<std::string>{"node_joined b", "node_joined c"}));
  EXPECT_EQ(news[0].details["node_rank"], 1);
  EXPECT_EQ(news[0].details["pid"], 11);
  EXPECT_TRUE(news[0].details["machine"].is_null());
  EXPECT_TRUE(seats.seated(1, round0, 0).empty());
}

TEST(SeatHistory, ALauncherStartedAgainOnItsMachineReturnsAndANewMachineJoins) {
  SeatHistory seats;
  seats.seated(0, {node(0, "a", 10), node(1, "b", 11, "vm-b")}, 0);
  // b's launcher was started again (a new pid, the same machine); d is new; b's node rank moved.
  const auto news =
      seats.seated(1, {node(0, "a", 10), node(1, "d", 13), node(2, "b", 14, "vm-b")}, 0);
  EXPECT_EQ(said(news), (std::vector<std::string>{"node_joined d", "node_returned b"}));
  EXPECT_EQ(news[1].details["rounds_away"], 0);
  EXPECT_EQ(news[1].details["machine"], "vm-b");
  EXPECT_EQ(news[1].details["node_rank"], 2);
}

TEST(SeatHistory, ALauncherWhoseRanksClosedUpMovesAndOneThatKeptItsRankIsNoNews) {
  SeatHistory seats;
  seats.seated(0, {node(0, "a", 10), node(1, "b", 11), node(2, "c", 12), node(3, "d", 13)}, 0);
  // b was lost: c and d hold ranks 1 and 2 now; a spare e takes rank 3.
  const auto news =
      seats.seated(1, {node(0, "a", 10), node(1, "c", 12), node(2, "d", 13), node(3, "e", 14)}, 0);
  ASSERT_EQ(said(news),
            (std::vector<std::string>{"node_moved c", "node_moved d", "node_joined e"}));
  EXPECT_EQ(news[0].details["node_rank"], 1);
  EXPECT_EQ(news[0].details["from_node_rank"], 2);
  EXPECT_EQ(news[0].details["pid"], 12);
  EXPECT_EQ(news[1].details["from_node_rank"], 3);
  EXPECT_FALSE(news[2].details.contains("from_node_rank"));
  // The next round under the same ranks: nothing.
  EXPECT_TRUE(
      seats.seated(2, {node(0, "a", 10), node(1, "c", 12), node(2, "d", 13), node(3, "e", 14)}, 0)
          .empty());
}

TEST(SeatHistory, ANodeThatSatRoundsOutReturnsSayingHowMany) {
  SeatHistory seats;
  seats.seated(0, {node(0, "a", 10), node(1, "b", 11)}, 0);
  seats.seated(1, {node(0, "a", 10)}, 0);  // b benched, or waiting as a spare
  seats.seated(2, {node(0, "a", 10)}, 0);
  const auto news = seats.seated(3, {node(0, "a", 10), node(1, "b", 11)}, 0);
  ASSERT_EQ(said(news), (std::vector<std::string>{"node_returned b"}));
  EXPECT_EQ(news[0].details["rounds_away"], 2);
}

TEST(SeatHistory, ALauncherThatFirstGivesSeatsLaterKnowsNoPastAndSaysNothingThatRound) {
  SeatHistory seats;  // under etcd, this launcher claims round 4 first
  EXPECT_TRUE(seats.seated(4, {node(0, "c", 12), node(1, "a", 10)}, 0).empty());
  EXPECT_EQ(said(seats.seated(5, {node(0, "c", 12), node(1, "a", 10), node(2, "e", 15)}, 0)),
            (std::vector<std::string>{"node_joined e"}));
}

TEST(SeatHistory, WithoutASchedulersNameAMachineIsItsHostAndAddress) {
  SeatHistory seats;
  seats.seated(0, {node(0, "a", 10), node(1, "b", 11)}, 0);
  NodeInfo again = node(1, "b", 12);
  again.addr = node(1, "b", 11).addr;     // started again on the same VM
  NodeInfo elsewhere = node(2, "b", 13);  // a pod started again under its name, a new address
  EXPECT_EQ(said(seats.seated(1, {node(0, "a", 10), again, elsewhere}, 0)),
            (std::vector<std::string>{"node_returned b", "node_joined b"}));
}

TEST(SeatHistory, LaunchersSharingAMachineEachJoin) {
  SeatHistory seats;  // a test's nodes, or a per-process launch: one host
  EXPECT_EQ(said(seats.seated(0, {node(0, "a", 10), node(1, "a", 11), node(2, "a", 12)}, 0)),
            (std::vector<std::string>{"node_joined a", "node_joined a"}));
}

}  // namespace
}  // namespace aml

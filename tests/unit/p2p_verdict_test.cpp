// Point-to-point calls at a hang, from hand-made dumps in the shape NCCL's flight recorder
// writes them ("nccl:send 1->0", "nccl:recv 0<-1", is_p2p, p2p_seq_id; torch's Gloo records no
// p2p): pairs waiting on each other, a rank waiting on a peer that is elsewhere, a matched
// pair never completed, completed calls left alone, a subgroup's ranks, the crossing form.
#include <gtest/gtest.h>

#include "flight/collective_digest.hpp"
#include "flight/collective_verdict.hpp"

namespace aml {
namespace {

nlohmann::json collective(std::int64_t seq, const std::string& state, const std::string& pg = "0") {
  return {{"process_group", {pg, pg == "0" ? "default_pg" : "pp"}},
          {"collective_seq_id", seq},
          {"p2p_seq_id", 0},
          {"is_p2p", false},
          {"profiling_name", "nccl:all_reduce"},
          {"input_sizes", {{4}}},
          {"input_dtypes", {"Float"}},
          {"time_created_ns", 1'764'000'000'000'000'000 + seq},
          {"state", state}};
}

nlohmann::json p2p(std::int64_t seq, const std::string& name, const std::string& state,
                   const std::string& pg = "0") {
  return {{"process_group", {pg, pg == "0" ? "default_pg" : "pp"}},
          {"collective_seq_id", 0},
          {"p2p_seq_id", seq},
          {"is_p2p", true},
          {"profiling_name", "nccl:" + name},
          {"input_sizes", {{8}}},
          {"input_dtypes", {"Float"}},
          {"time_created_ns", 1'764'000'000'000'000'000 + 100 + seq},
          {"state", state}};
}

struct Ranks {
  std::vector<RankCollectives> held;
  void add(const std::vector<nlohmann::json>& entries) {
    auto groups = digest_flight_dump(nlohmann::json{{"entries", entries}});
    EXPECT_TRUE(groups) << groups.error().message();
    RankCollectives c;
    c.status = RankCollectives::Status::read;
    if (groups) c.groups = *groups;
    held.push_back(c);
  }
  CollectiveVerdict verdict(const std::vector<int>& ranks = {}) const {
    std::vector<RankCollectiveDigest> digests;
    for (std::size_t i = 0; i < held.size(); ++i)
      digests.push_back({ranks.empty() ? static_cast<int>(i) : ranks[i], 0, &held[i]});
    return collective_verdict(digests);
  }
};

TEST(P2PVerdict, TwoRanksEachWaitingToSendToTheOther) {
  Ranks r;
  r.add({collective(1, "completed"), p2p(1, "send 0->1", "scheduled")});
  r.add({collective(1, "completed"), p2p(1, "send 1->0", "started")});
  const auto v = r.verdict();
  EXPECT_EQ(v.line,
            "ranks 0 and 1 each wait to send to the other (send #1 of default_pg, send #1): "
            "neither posted its recv");
  EXPECT_EQ(v.named, (std::vector<int>{0, 1}));
  EXPECT_EQ(v.json["findings"][0]["kind"], "p2p_deadlock");
  EXPECT_EQ(v.json["findings"][0]["calls"][1]["rank"], 1);
}

TEST(P2PVerdict, ARankWaitingOnAPeerThatIsElsewhere) {
  // Rank 0 waits to receive from rank 2; rank 2 completed everything it posted: it never sent.
  Ranks r;
  r.add({collective(1, "completed"), p2p(1, "send 0->1", "completed"),
         p2p(2, "recv 0<-2", "scheduled")});
  r.add({collective(1, "completed"), p2p(1, "recv 1<-0", "completed")});
  r.add({collective(1, "completed")});
  const auto v = r.verdict();
  EXPECT_EQ(v.line, "rank 0 waits in recv #2 of default_pg from rank 2, which never sent");
  EXPECT_EQ(v.named, std::vector<int>{2});
  EXPECT_EQ(v.json["findings"][0]["kind"], "p2p_unmatched");
}

TEST(P2PVerdict, AMatchedPairNeverCompletedAndTheOldestOpenCallCounts) {
  Ranks r;
  r.add({p2p(1, "send 0->1", "scheduled"), p2p(2, "send 0->1", "scheduled")});
  r.add({p2p(1, "recv 1<-0", "started")});
  const auto v = r.verdict();
  EXPECT_EQ(v.line,
            "ranks 0 and 1 both wait in their send and recv to each other (send #1 of "
            "default_pg, recv #1) and neither completed it");
  EXPECT_EQ(v.json["findings"][0]["kind"], "p2p_not_completed");
}

TEST(P2PVerdict, CompletedCallsAreNothingAmiss) {
  Ranks r;
  r.add({collective(1, "completed"), p2p(1, "send 0->1", "completed")});
  r.add({collective(1, "completed"), p2p(1, "recv 1<-0", "completed")});
  const auto v = r.verdict();
  EXPECT_EQ(v.line, "every rank completed every collective it enqueued: the hang is outside them");
  EXPECT_TRUE(v.named.empty());
}

TEST(P2PVerdict, ASubgroupsRanksAreTheJobsByWhatEachSaysOfItself) {
  // Ranks 2 and 3 are group ranks 0 and 1 of a pipeline group: each waits to receive.
  Ranks r;
  r.add({collective(1, "completed"), p2p(1, "recv 0<-1", "scheduled", "5")});
  r.add({collective(1, "completed"), p2p(1, "recv 1<-0", "scheduled", "5")});
  const auto v = r.verdict({2, 3});
  EXPECT_EQ(v.line,
            "ranks 2 and 3 each wait to recv from the other (recv #1 of pp, recv #1): neither "
            "sent");
  EXPECT_EQ(v.named, (std::vector<int>{2, 3}));
}

TEST(P2PVerdict, TheOpenCallCrossesNodes) {
  Ranks r;
  r.add({p2p(3, "send 4->7", "scheduled")});
  const RankCollectives back = collectives_from_json(collectives_json(r.held[0]));
  ASSERT_EQ(back.groups.size(), 1u);
  ASSERT_TRUE(back.groups[0].p2p_open);
  EXPECT_EQ(back.groups[0].p2p_open->seq, 3);
  EXPECT_EQ(back.groups[0].p2p_open->op, "send");
  EXPECT_EQ(back.groups[0].p2p_open->self, 4);
  EXPECT_EQ(back.groups[0].p2p_open->peer, 7);
  EXPECT_EQ(collectives_json(back), collectives_json(r.held[0]));
  // A name not as NCCL writes it is no p2p call.
  Ranks odd;
  odd.add({p2p(1, "send 4-7", "scheduled"), p2p(2, "recv x<-1", "scheduled")});
  EXPECT_FALSE(odd.held[0].groups.at(0).p2p_open);
}

}  // namespace
}  // namespace aml

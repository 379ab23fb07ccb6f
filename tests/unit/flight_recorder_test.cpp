// The flight recorder's dumps read (the pickle subset), reduced to digests and compared: real
// dumps torch 2.15's recorder wrote over Gloo (tests/fixtures/flight-recorder/make_dumps.py),
// and hand-made pickles for what a dump must never do.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "fixture_paths.hpp"
#include "flight/collective_digest.hpp"
#include "flight/collective_verdict.hpp"
#include "flight/pickle_subset.hpp"
#include "supervisor/hang_report.hpp"

namespace aml {
namespace {

std::string dump_bytes(const std::string& name) {
  std::ifstream in(std::string(test::flight_recorder_fixtures()) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

RankCollectives read_rank(const std::string& name) {
  RankCollectives c;
  auto value = read_pickle_subset(dump_bytes(name));
  EXPECT_TRUE(value) << value.error().message();
  auto groups = digest_flight_dump(*value);
  EXPECT_TRUE(groups) << groups.error().message();
  c.status = RankCollectives::Status::read;
  c.groups = *groups;
  return c;
}

std::string refused(std::string_view bytes, PickleLimits limits = {}) {
  auto value = read_pickle_subset(bytes, limits);
  EXPECT_FALSE(value) << value->dump();
  return value ? "" : value.error().expected;
}

TEST(PickleSubset, ReadsARealDumpAsTorchWroteIt) {
  auto value = read_pickle_subset(dump_bytes("behind/rank_0.pkl"));
  ASSERT_TRUE(value) << value.error().message();
  ASSERT_TRUE(value->is_object());
  const auto& entries = (*value)["entries"];
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[3]["profiling_name"], "gloo:all_reduce");
  EXPECT_EQ(entries[3]["collective_seq_id"], 3);
  EXPECT_EQ(entries[3]["input_sizes"], nlohmann::json::parse("[[4]]"));
  EXPECT_EQ(entries[3]["process_group"], nlohmann::json::parse(R"(["0", "default_pg"])"));
  EXPECT_TRUE(entries[3]["time_discovered_completed_ns"].is_null());
  EXPECT_GT(entries[3]["time_created_ns"].get<std::int64_t>(), 1'700'000'000'000'000'000);
  EXPECT_EQ((*value)["pg_status"]["0"]["last_completed_collective"], 2);
}

TEST(PickleSubset, SharedContainersAreOneObjectAsInPython) {
  // [d, d] where d is memoized empty, then filled: both places see {"k": "v"}.
  auto value =
      read_pickle_subset(std::string_view("]q\x00(}q\x01h\x01"
                                          "eh\x01(X\x01\x00\x00\x00kX\x01\x00\x00\x00vu0.",
                                          33));
  ASSERT_TRUE(value) << value.error().message();
  EXPECT_EQ(*value, nlohmann::json::parse(R"([{"k": "v"}, {"k": "v"}])"));
}

TEST(PickleSubset, NumbersOfEveryWidth) {
  auto negative = read_pickle_subset(std::string_view("\x80\x02\x8a\x02\x00\xff.", 7));
  ASSERT_TRUE(negative);
  EXPECT_EQ(*negative, -256);
  // BINFLOAT 1.5, big-endian; BININT -2; BININT2 513.
  auto mixed = read_pickle_subset(
      std::string_view("(G\x3f\xf8\x00\x00\x00\x00\x00\x00J\xfe\xff\xff\xffM\x01\x02l.", 21));
  ASSERT_TRUE(mixed) << mixed.error().message();
  EXPECT_EQ(*mixed, nlohmann::json::parse("[1.5, -2, 513]"));
}

TEST(PickleSubset, ACallIsRefusedNeverRun) {
  const std::string why = refused("\x80\x02\x63os\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85R.");
  EXPECT_NE(why.find("opcode 0x63 (GLOBAL) at byte 2"), std::string::npos) << why;
}

TEST(PickleSubset, ACutDumpIsNamedAsCut) {
  const std::string whole = dump_bytes("behind/rank_1.pkl");
  for (std::size_t keep : {std::size_t{0}, std::size_t{2}, whole.size() / 2, whole.size() - 1}) {
    const std::string why = refused(std::string_view(whole).substr(0, keep));
    EXPECT_FALSE(why.empty()) << keep;
  }
}

TEST(PickleSubset, BoundsHoldAgainstSelfReferenceAndDoubling) {
  // A list that holds itself.
  const std::string cycle = refused(std::string_view("]q\x00h\x00\x61.", 7));
  EXPECT_NE(cycle.find("nested deeper"), std::string::npos) << cycle;
  // Each level two references to the one below: 2^40 values if expanded.
  std::string doubling = "N";
  for (int i = 0; i < 40; ++i) doubling += std::string("q\x00h\x00\x86", 5);
  doubling += ".";
  PickleLimits limits;
  limits.max_depth = 100;
  limits.max_values = 100'000;  // the default, 4 million, is slow to reach under sanitizers
  const std::string wide = refused(doubling, limits);
  EXPECT_NE(wide.find("more values"), std::string::npos) << wide;
  limits.max_bytes = 100;
  const std::string big = refused(dump_bytes("behind/rank_0.pkl"), limits);
  EXPECT_NE(big.find("more than the 100 bytes"), std::string::npos) << big;
}

TEST(CollectiveDigest, PerGroupTheLastEnqueuedAndTheLastCompleted) {
  const RankCollectives rank0 = read_rank("behind/rank_0.pkl");
  ASSERT_EQ(rank0.groups.size(), 2u);
  const GroupDigest& world = rank0.groups[0];
  EXPECT_EQ(world.id, "0");
  EXPECT_EQ(group_text(world), "default_pg");
  EXPECT_EQ(world.enqueued.seq, 3);
  EXPECT_EQ(world.enqueued.op, "all_reduce");
  EXPECT_EQ(world.enqueued.sizes, "[[4]]");
  EXPECT_EQ(world.enqueued.dtypes, "Float");
  EXPECT_EQ(world.completed, 2);
  EXPECT_EQ(group_text(rank0.groups[1]), "process group 1");
  EXPECT_EQ(rank0.groups[1].enqueued.sizes, "[[2, 3]]");
  // Across nodes and back, the same.
  const RankCollectives again = collectives_from_json(collectives_json(rank0));
  EXPECT_EQ(collectives_json(again), collectives_json(rank0));
  EXPECT_LT(collectives_json(rank0).dump().size(), 400u);
}

TEST(CollectiveDigest, WithoutATorchStatusTheEntriesStatesSayWhatCompleted) {
  // An older torch's dump: no pg_status; NCCL's entries say "completed" as they end.
  auto groups = digest_flight_dump(nlohmann::json::parse(R"({"entries": [
      {"process_group": ["0", "default_pg"], "collective_seq_id": 1, "state": "completed"},
      {"process_group": ["0", "default_pg"], "collective_seq_id": 2, "state": "started"}]})"));
  ASSERT_TRUE(groups) << groups.error().message();
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_EQ((*groups)[0].enqueued.seq, 2);
  EXPECT_EQ((*groups)[0].completed, 1);
  // And a crossing form whose status is not text reads as nothing asked, not a crash.
  EXPECT_EQ(collectives_from_json(nlohmann::json::parse(R"({"status": 3})")).status,
            RankCollectives::Status::not_asked);
}

TEST(CollectiveDigest, FieldsOfTheWrongTypeAreAnErrorNotACrash) {
  for (const char* bad : {R"({"entries": 3})", R"({"entries": [{"is_p2p": 3}]})",
                          R"({"entries": [{"process_group": ["0"], "state": 5}]})", R"([1])"}) {
    auto digest = digest_flight_dump(nlohmann::json::parse(bad));
    EXPECT_FALSE(digest) << bad;
  }
}

std::vector<RankCollectiveDigest> two_ranks(const RankCollectives& a, const RankCollectives& b) {
  return {{0, 0, &a}, {1, 0, &b}};
}

TEST(CollectiveVerdict, TheRankBehindIsNamedAtTheCollectiveItNeverEntered) {
  const RankCollectives r0 = read_rank("behind/rank_0.pkl"), r1 = read_rank("behind/rank_1.pkl");
  const CollectiveVerdict v = collective_verdict(two_ranks(r0, r1));
  EXPECT_EQ(v.named, std::vector<int>{1});
  EXPECT_EQ(v.line.rfind("rank 1 never entered all_reduce #3 of default_pg (its last: all_reduce "
                         "#2); the one other has waited in it since 20",
                         0),
            0u)
      << v.line;
  EXPECT_EQ(v.json["findings"][0]["kind"], "behind");
  EXPECT_EQ(v.json["findings"][0]["call"]["seq"], 3);
}

TEST(CollectiveVerdict, AnOpMismatchAtOneSequenceNumberIsNamed) {
  const RankCollectives r0 = read_rank("mismatch/rank_0.pkl"),
                        r1 = read_rank("mismatch/rank_1.pkl");
  const CollectiveVerdict v = collective_verdict(two_ranks(r0, r1));
  EXPECT_EQ(v.line,
            "rank 1 called broadcast (#2 of default_pg) where the one other called all_reduce")
      << v.line;
  EXPECT_EQ(v.named, std::vector<int>{1});
  EXPECT_EQ(v.json["findings"][0]["kind"], "mismatch");
}

TEST(CollectiveVerdict, DifferentSizesAtOneSequenceNumberAreNamed) {
  RankCollectives a = read_rank("behind/rank_1.pkl");
  RankCollectives b = a, c = a;
  c.groups[0].enqueued.sizes = "[[3]]";
  const CollectiveVerdict v = collective_verdict({{0, 0, &a}, {1, 0, &b}, {2, 1, &c}});
  EXPECT_EQ(
      v.line,
      "rank 2 called all_reduce #2 of default_pg with sizes [[3]] where the 2 others had [[4]]")
      << v.line;
}

TEST(CollectiveVerdict, MissingAndUnreadableDumpsAreNamedBesideTheFinding) {
  const RankCollectives r0 = read_rank("behind/rank_0.pkl"), r1 = read_rank("behind/rank_1.pkl");
  RankCollectives none, bad, not_torch;
  none.status = RankCollectives::Status::no_dump;
  bad.status = RankCollectives::Status::unreadable;
  bad.why = "opcode 0x63 (GLOBAL) at byte 2";
  const CollectiveVerdict v = collective_verdict(
      {{0, 0, &r0}, {1, 0, &r1}, {2, 1, &none}, {3, 1, &bad}, {4, 1, &not_torch}});
  EXPECT_NE(v.line.find("rank 1 never entered all_reduce #3"), std::string::npos) << v.line;
  EXPECT_NE(v.line.find("the dump of rank 2 never came; the dump of rank 3 could not be read "
                        "(opcode 0x63 (GLOBAL) at byte 2)"),
            std::string::npos)
      << v.line;
  EXPECT_EQ(v.json["no_dump"], nlohmann::ordered_json::parse("[2]"));
}

TEST(CollectiveVerdict, NothingIsSaidWhereNoRankRunsTorchAndTheStacksAloneWhereNoneListened) {
  RankCollectives plain, torch_without;
  torch_without.status = RankCollectives::Status::no_recorder;
  EXPECT_EQ(collective_verdict({{0, 0, &plain}, {1, 0, &plain}}).line, "");
  const CollectiveVerdict v = collective_verdict({{0, 0, &torch_without}, {1, 0, &torch_without}});
  EXPECT_EQ(v.line.rfind("no rank's flight recorder answered its pipe", 0), 0u) << v.line;
  EXPECT_EQ(v.json["status"], "no_recorder");
}

TEST(CollectiveVerdict, EveryRankDoneWithEveryCollectiveSaysTheHangIsElsewhere) {
  const RankCollectives r1 = read_rank("behind/rank_1.pkl");
  const CollectiveVerdict v = collective_verdict(two_ranks(r1, r1));
  EXPECT_TRUE(v.named.empty());
  EXPECT_EQ(v.line, "every rank completed every collective it enqueued: the hang is outside them");
}

TEST(HangReportVerdict, TheStacksAndTheRecorderStandSideBySideAndTheirDisagreementIsSaid) {
  const RankCollectives r0 = read_rank("behind/rank_0.pkl"), r1 = read_rank("behind/rank_1.pkl");
  HangReport report;
  report.places = {{0, 0, "all_reduce (distributed_c10d.py:1)", "", r0},
                   {1, 0, "all_reduce (distributed_c10d.py:1)", "", r1},
                   {2, 0, "load_batch (train.py:9)", "", r0}};
  report.decide();
  EXPECT_NE(report.verdict.find("rank 2 is in load_batch (train.py:9); ranks 0 and 1 wait in "
                                "all_reduce"),
            std::string::npos)
      << report.verdict;
  EXPECT_NE(report.verdict.find("; flight recorder: rank 1 never entered all_reduce #3"),
            std::string::npos)
      << report.verdict;
  EXPECT_NE(report.verdict.find("(the stacks and the flight recorder name different ranks)"),
            std::string::npos)
      << report.verdict;
  const auto json = nlohmann::json::parse(report.json_text());
  EXPECT_EQ(json["collective"]["ranks"], nlohmann::json::parse("[1]"));
}

}  // namespace
}  // namespace aml

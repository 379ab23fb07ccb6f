// The answers to a round's slots, a group of them under one key written once: every slot of a
// group is answered (its own answer, or the group's rest), and a record that is not one says so.
#include "rendezvous/slot_answers.hpp"

#include <gtest/gtest.h>

#include "rendezvous/rendezvous_client.hpp"

namespace aml {
namespace {

constexpr std::int64_t kGroup = RendezvousClient::kSlotsPerAnswer;

TEST(SlotAnswers, GroupsCoverTheSlotsTaken) {
  EXPECT_EQ(answer_groups(0), 0);
  EXPECT_EQ(answer_groups(-3), 0);
  EXPECT_EQ(answer_groups(1), 1);
  EXPECT_EQ(answer_groups(kGroup), 1);
  EXPECT_EQ(answer_groups(kGroup + 1), 2);
  EXPECT_EQ(answer_groups(1024), 1024 / kGroup);
}

TEST(SlotAnswers, EachSlotFindsItsOwnAnswerOrTheRest) {
  const std::map<std::int64_t, std::string> answers = {
      {0, "3 10 0"}, {2, "spare"}, {kGroup + 5, "0 10 0"}};
  auto records = answer_records("r/count", 0, 2, answers, "late");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].first, RendezvousClient::answer_key("r/count", 0));
  EXPECT_EQ(records[1].first, RendezvousClient::answer_key("r/count", kGroup));
  EXPECT_NE(records[0].first, records[1].first);
  EXPECT_EQ(answer_in(records[0].second, 0), "3 10 0");
  EXPECT_EQ(answer_in(records[0].second, 1), "late");  // between two answers
  EXPECT_EQ(answer_in(records[0].second, 2), "spare");
  EXPECT_EQ(answer_in(records[0].second, kGroup - 1), "late");  // after the last one
  EXPECT_EQ(answer_in(records[1].second, kGroup), "late");
  EXPECT_EQ(answer_in(records[1].second, kGroup + 5), "0 10 0");
  EXPECT_EQ(answer_in(records[1].second, 2 * kGroup - 1), "late");
}

TEST(SlotAnswers, OnlyTheGroupsAskedForAreWritten) {
  auto records = answer_records("r/count", 3, 5, {}, "end");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].first, RendezvousClient::answer_key("r/count", 3 * kGroup));
  EXPECT_EQ(answer_in(records[1].second, 5 * kGroup - 1), "end");
  EXPECT_TRUE(answer_records("r/count", 2, 2, {{0, "x"}}, "late").empty());
}

TEST(SlotAnswers, AnErrorsNewlinesStayInItsOwnLine) {
  auto records = answer_records("r/count", 0, 1, {{1, "error two\nlines"}}, "late");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(answer_in(records[0].second, 1), "error two lines");
  EXPECT_EQ(answer_in(records[0].second, 2), "late");
}

TEST(SlotAnswers, ARecordThatIsNotOneAnswersNothing) {
  EXPECT_EQ(answer_in("", 0), "");
  EXPECT_EQ(answer_in("3 10 0", 0), "");         // no rest line
  EXPECT_EQ(answer_in("3 10 0\nspare", 1), "");  // still none
  EXPECT_EQ(answer_in("\n\n\n", 5), "");
  EXPECT_EQ(answer_in("*late", 0), "late");  // every slot the rest
  EXPECT_EQ(answer_in("a\n*", 1), "");       // an empty rest
  std::string huge(1 << 20, '\n');
  EXPECT_EQ(answer_in(huge, kGroup - 1), "");
}

}  // namespace
}  // namespace aml

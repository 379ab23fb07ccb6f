// A round's answers under its launchers' numbers' keys, each written once: every launcher finds
// its own answer or its key's rest, each key is written (a launcher watches its own before the
// round opens), and a record that is not one answers nothing.
#include "rendezvous/round_answers.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <set>

#include "rendezvous/rendezvous_client.hpp"

namespace aml {
namespace {

constexpr long kKeys = static_cast<long>(RendezvousClient::kAnswerKeys);

// The record that holds launcher's answer among answer_records'.
std::string record_of(const std::vector<std::pair<std::string, std::string>>& records,
                      long launcher) {
  const std::string key = RendezvousClient::answer_key("r/count", launcher);
  for (const auto& [name, record] : records) {
    if (name == key) return record;
  }
  ADD_FAILURE() << "no record under " << key;
  return "";
}

TEST(RoundAnswers, EveryKeyIsWrittenOnceEvenWithoutAnswers) {
  auto records = answer_records("r/count", {}, "end");
  ASSERT_EQ(records.size(), RendezvousClient::kAnswerKeys);
  std::set<std::string> keys;
  for (const auto& [key, record] : records) {
    keys.insert(key);
    EXPECT_TRUE(key.starts_with("r/count/answers/")) << key;
    EXPECT_EQ(answer_in(record, 12345), "end");
  }
  EXPECT_EQ(keys.size(), records.size()) << "no key twice";
}

TEST(RoundAnswers, EachLauncherFindsItsOwnAnswerOrTheRest) {
  // 3 and 3 + kKeys share a key; 30 + kKeys * 9 a big number; 7 is not answered.
  const std::map<long, std::string> answers = {
      {3, "3 10 0"}, {3 + kKeys, "spare"}, {30 + kKeys * 9, "0 10 0"}, {1, "error refused"}};
  auto records = answer_records("r/count", answers, "late");
  ASSERT_EQ(records.size(), RendezvousClient::kAnswerKeys);
  EXPECT_EQ(RendezvousClient::answer_key("r/count", 3),
            RendezvousClient::answer_key("r/count", 3 + kKeys));
  EXPECT_EQ(answer_in(record_of(records, 3), 3), "3 10 0");
  EXPECT_EQ(answer_in(record_of(records, 3 + kKeys), 3 + kKeys), "spare");
  EXPECT_EQ(answer_in(record_of(records, 3 + 2 * kKeys), 3 + 2 * kKeys), "late");
  EXPECT_EQ(answer_in(record_of(records, 30 + kKeys * 9), 30 + kKeys * 9), "0 10 0");
  EXPECT_EQ(answer_in(record_of(records, 1), 1), "error refused");
  EXPECT_EQ(answer_in(record_of(records, 7), 7), "late");
  // A number that is the start of another's is not it.
  EXPECT_EQ(answer_in("31 0 4 0\n*late", 3), "late");
}

TEST(RoundAnswers, AnyNumberHasAKeyLargeOrNegative) {
  for (long launcher : {0L, 63L, 64L, LONG_MAX, -1L, LONG_MIN}) {
    auto records = answer_records("r/count", {{launcher, "2 4 0"}}, "late");
    EXPECT_EQ(answer_in(record_of(records, launcher), launcher), "2 4 0") << launcher;
  }
}

TEST(RoundAnswers, AnErrorsNewlinesStayInItsOwnLine) {
  auto records = answer_records("r/count", {{1, "error two\nlines"}}, "late");
  EXPECT_EQ(answer_in(record_of(records, 1), 1), "error two lines");
  EXPECT_EQ(answer_in(record_of(records, 1 + kKeys), 1 + kKeys), "late");
}

TEST(RoundAnswers, ARecordThatIsNotOneAnswersNothing) {
  EXPECT_EQ(answer_in("", 0), "");
  EXPECT_EQ(answer_in("0 3 10 0", 0), "");         // no rest line
  EXPECT_EQ(answer_in("0 3 10 0\nspare", 1), "");  // still none
  EXPECT_EQ(answer_in("\n\n\n", 5), "");
  EXPECT_EQ(answer_in("*late", 0), "late");     // every launcher the rest
  EXPECT_EQ(answer_in("a\n*", 1), "");          // an empty rest
  EXPECT_EQ(answer_in("5\n*late", 5), "late");  // a number without an answer is no line of 5's
  EXPECT_EQ(answer_in("99999999999999999999999 x\n*late", 5), "late");  // out of range
  std::string huge(1 << 20, '\n');
  EXPECT_EQ(answer_in(huge, 63), "");
}

}  // namespace
}  // namespace aml

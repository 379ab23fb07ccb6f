// torch's store protocol decoder (store/torch/torch_wire.hpp): the three numberings, the dialect a
// legacy connection settles into, the limits, and requests cut anywhere.
#include "store/torch/torch_wire.hpp"

#include <gtest/gtest.h>

namespace aml::store::torch {
namespace {

std::string u64(std::uint64_t v) {
  std::string out;
  put_i64(out, static_cast<std::int64_t>(v));
  return out;
}
std::string str(std::string_view s) {
  std::string out;
  put_bytes(out, s);
  return out;
}
std::string op(std::uint8_t q) { return std::string(1, static_cast<char>(q)); }
std::string validate(std::uint32_t magic = kValidateMagic) {
  std::string out = op(0);
  put_u32(out, magic);
  return out;
}

Decoded decode_one(const std::string& bytes, Dialect dialect = Dialect::legacy, bool first = true,
                   const Limits& limits = Limits{}) {
  return decode(bytes, dialect, first, limits);
}

TEST(TorchWire, AConnectionThatValidatesFirstNumbersItsQueriesAsTorch22AndLater) {
  auto d = decode_one(validate());
  ASSERT_EQ(d.outcome, Outcome::request);
  EXPECT_EQ(d.request.op, Op::validate);
  EXPECT_EQ(d.dialect, Dialect::validated);
  EXPECT_EQ(d.used, 5u);
  d = decode_one(op(1) + str("/k") + str("v"), Dialect::validated, false);
  ASSERT_EQ(d.outcome, Outcome::request);
  EXPECT_EQ(d.request.op, Op::set);
  EXPECT_EQ(d.request.keys.at(0), "/k");
  EXPECT_EQ(d.request.values.at(0), "v");
  std::string ping = op(13);
  put_u32(ping, 606);
  d = decode_one(ping, Dialect::validated, false);
  EXPECT_EQ(d.request.op, Op::ping);
  EXPECT_EQ(d.request.number, 606);
  EXPECT_EQ(decode_one(op(17), Dialect::validated, false).request.op, Op::list_keys);
  EXPECT_EQ(decode_one(op(15) + str("/q"), Dialect::validated, false).request.op, Op::queue_pop);
  // Past LIST_KEYS torch's server closes the connection, and so does this one.
  EXPECT_EQ(decode_one(op(18), Dialect::validated, false).outcome, Outcome::bad);
  EXPECT_EQ(decode_one(validate(0x12345678), Dialect::validated, false).outcome, Outcome::bad);
}

TEST(TorchWire, ALegacyConnectionNumbersFromSetZero) {
  // 1.13's first request is often ADD "init/" 1: op 3 there.
  auto d = decode_one(op(3) + str("init/") + u64(1));
  ASSERT_EQ(d.outcome, Outcome::request);
  EXPECT_EQ(d.request.op, Op::add);
  EXPECT_EQ(d.request.number, 1);
  EXPECT_EQ(d.dialect, Dialect::legacy);
  // A legacy SET as the first request: op 0, but no magic after it.
  d = decode_one(op(0) + str("/k") + str("v"));
  ASSERT_EQ(d.outcome, Outcome::request);
  EXPECT_EQ(d.request.op, Op::set);
  EXPECT_EQ(d.dialect, Dialect::legacy);
  d = decode_one(op(5) + u64(2) + str("/a") + str("/b"), Dialect::legacy, false);
  EXPECT_EQ(d.request.op, Op::wait);
  EXPECT_EQ(d.request.keys, (std::vector<std::string>{"/a", "/b"}));
}

TEST(TorchWire, SevenAndEightTellTorch20From21) {
  // <= 2.0: WATCH_KEY 7 is the first request of its callback connection.
  auto d = decode_one(op(7) + str("/k"));
  EXPECT_EQ(d.request.op, Op::watch_key);
  EXPECT_EQ(d.dialect, Dialect::legacy_2_0);
  // 2.1: DELETE_KEY 7 after other requests.
  d = decode_one(op(7) + str("/k"), Dialect::legacy, false);
  EXPECT_EQ(d.request.op, Op::delete_key);
  EXPECT_EQ(d.dialect, Dialect::legacy_2_1);
  // 8 with nothing after its key: <= 2.0's DELETE_KEY, whose client waits for the reply.
  d = decode_one(op(8) + str("/k"), Dialect::legacy, false);
  EXPECT_EQ(d.request.op, Op::delete_key);
  EXPECT_EQ(d.dialect, Dialect::legacy_2_0);
  // 8 with a value after its key: 2.1's APPEND (its client sends a request in one buffer).
  d = decode_one(op(8) + str("/k") + str("tail"), Dialect::legacy, false);
  EXPECT_EQ(d.request.op, Op::append);
  EXPECT_EQ(d.request.values.at(0), "tail");
  EXPECT_EQ(d.dialect, Dialect::legacy_2_1);
  // Part of a value's length: wait for the rest, settle nothing.
  d = decode_one(op(8) + str("/k") + "\x04\x00", Dialect::legacy, false);
  EXPECT_EQ(d.outcome, Outcome::need_more);
  EXPECT_EQ(d.dialect, Dialect::legacy);
  // Once settled, 8 is what the dialect says; 9-11 exist in 2.1 alone.
  EXPECT_EQ(decode_one(op(8) + str("/k"), Dialect::legacy_2_1, false).outcome, Outcome::need_more);
  EXPECT_EQ(decode_one(op(8) + str("/k"), Dialect::legacy_2_0, false).request.op, Op::delete_key);
  d = decode_one(op(11), Dialect::legacy, false);
  EXPECT_EQ(d.request.op, Op::cancel_wait);
  EXPECT_EQ(d.dialect, Dialect::legacy_2_1);
  EXPECT_EQ(decode_one(op(11), Dialect::legacy_2_0, false).outcome, Outcome::bad);
  EXPECT_EQ(decode_one(op(12), Dialect::legacy_2_1, false).outcome, Outcome::bad);
}

TEST(TorchWire, EveryCutOfARequestWaitsForTheRestAndTheWholeIsTakenOnce) {
  std::string multi_set = op(11) + u64(2) + str("/a") + str("1") + str("/b") + str("22");
  std::string compare_set = op(2) + str("/k") + str("old") + str("new");
  for (const std::string& whole : {multi_set, compare_set}) {
    for (std::size_t cut = 1; cut < whole.size(); ++cut) {
      auto d = decode_one(whole.substr(0, cut), Dialect::validated, false);
      EXPECT_EQ(d.outcome, Outcome::need_more) << "cut at " << cut;
    }
    auto d = decode_one(whole + op(7), Dialect::validated, false);
    ASSERT_EQ(d.outcome, Outcome::request);
    EXPECT_EQ(d.used, whole.size());
  }
  auto d = decode_one(multi_set, Dialect::validated, false);
  EXPECT_EQ(d.request.keys, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(d.request.values, (std::vector<std::string>{"1", "22"}));
}

TEST(TorchWire, TorchsLimitsCloseTheConnectionBeforeTheBytesArrive) {
  // A key over 8 KiB, a value over 8 MiB, more than 128K keys: known from the lengths alone.
  auto d = decode_one(op(3) + u64(8 * 1024 + 1), Dialect::validated, false);
  EXPECT_EQ(d.outcome, Outcome::bad);
  EXPECT_NE(d.why.find("key"), std::string::npos) << d.why;
  d = decode_one(op(1) + str("/k") + u64(8 * 1024 * 1024 + 1), Dialect::validated, false);
  EXPECT_EQ(d.outcome, Outcome::bad);
  d = decode_one(op(6) + u64(128 * 1024 + 1), Dialect::validated, false);
  EXPECT_EQ(d.outcome, Outcome::bad);
  // A request whose values together pass the request's bound.
  Limits small;
  small.max_request = 64;
  d = decode_one(op(11) + u64(3) + str("/a") + u64(20), Dialect::validated, false, small);
  EXPECT_EQ(d.outcome, Outcome::need_more);
  d = decode_one(op(11) + u64(3) + str("/a") + str(std::string(20, 'x')) + str("/b") + u64(40),
                 Dialect::validated, false, small);
  EXPECT_EQ(d.outcome, Outcome::bad);
  EXPECT_NE(d.why.find("MULTI_SET"), std::string::npos) << d.why;
}

}  // namespace
}  // namespace aml::store::torch

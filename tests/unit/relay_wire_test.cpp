// The relay's wire (store/relay/relay_wire.hpp): a pure decoder, so every way a trunk can break is
// checked here, and the fuzz target (tests/fuzz/fuzz_relay_wire.cpp) tries the rest.
#include "store/relay/relay_wire.hpp"

#include <gtest/gtest.h>

namespace aml::store::relay {
namespace {

TEST(RelayWire, AHelloIsKnownByItsMagicAndVersion) {
  const std::string h = hello();
  EXPECT_EQ(h.size(), kHelloSize);
  EXPECT_TRUE(starts_like_hello(h));
  EXPECT_EQ(decode_hello(h.substr(0, 4)).outcome, Outcome::need_more);
  const Decoded whole = decode_hello(h + "rest");
  EXPECT_EQ(whole.outcome, Outcome::frame);
  EXPECT_EQ(whole.used, kHelloSize);
  std::string newer = h;
  newer[8] = 2;
  const Decoded other = decode_hello(newer);
  EXPECT_EQ(other.outcome, Outcome::bad);
  EXPECT_NE(other.why.find("version 2"), std::string::npos) << other.why;
  EXPECT_EQ(decode_hello("AMLX").outcome, Outcome::bad);
}

TEST(RelayWire, TorchsFirstRequestIsNeverTakenForAHello) {
  for (int query = 0; query <= 17; ++query) {
    EXPECT_FALSE(starts_like_hello(std::string(1, static_cast<char>(query)))) << query;
  }
}

TEST(RelayWire, DataAndCloseFramesRoundTrip) {
  std::string bytes;
  put_open(bytes, 7);
  const Decoded open = decode(bytes);
  ASSERT_EQ(open.outcome, Outcome::frame);
  EXPECT_EQ(open.kind, Kind::data);
  EXPECT_EQ(open.stream, 7u);
  EXPECT_TRUE(open.data.empty());
  bytes.clear();
  put_data(bytes, 7, "abc");
  put_close(bytes, 9);
  Decoded data = decode(bytes);
  ASSERT_EQ(data.outcome, Outcome::frame);
  EXPECT_EQ(data.kind, Kind::data);
  EXPECT_EQ(data.stream, 7u);
  EXPECT_EQ(data.data, "abc");
  Decoded end = decode(std::string_view(bytes).substr(data.used));
  ASSERT_EQ(end.outcome, Outcome::frame);
  EXPECT_EQ(end.kind, Kind::close);
  EXPECT_EQ(end.stream, 9u);
  EXPECT_EQ(data.used + end.used, bytes.size());
}

TEST(RelayWire, APartialFrameAsksForMore) {
  std::string bytes;
  put_data(bytes, 1, "hello");
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_EQ(decode(bytes.substr(0, cut)).outcome, Outcome::need_more) << cut;
  }
}

TEST(RelayWire, ALargeWriteIsCutIntoBoundedFrames) {
  const std::string big(kMaxData * 2 + 5, 'x');
  std::string bytes;
  put_data(bytes, 3, big);
  std::string back;
  std::string_view rest = bytes;
  int frames = 0;
  while (!rest.empty()) {
    Decoded d = decode(rest);
    ASSERT_EQ(d.outcome, Outcome::frame);
    back.append(d.data);
    rest.remove_prefix(d.used);
    ++frames;
  }
  EXPECT_EQ(frames, 3);
  EXPECT_EQ(back, big);
}

TEST(RelayWire, AnUnknownKindAnOversizedFrameOrACloseWithBytesIsBad) {
  EXPECT_EQ(decode(std::string(1, '\x05')).outcome, Outcome::bad);
  std::string oversized;
  oversized.push_back(static_cast<char>(Kind::data));
  oversized += std::string("\1\0\0\0", 4);
  const std::uint32_t length = kMaxData + 1;
  for (int i = 0; i < 4; ++i) oversized.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  EXPECT_EQ(decode(oversized).outcome, Outcome::bad);
  std::string close_with_bytes;
  close_with_bytes.push_back(static_cast<char>(Kind::close));
  close_with_bytes += std::string("\1\0\0\0\1\0\0\0x", 9);
  EXPECT_EQ(decode(close_with_bytes).outcome, Outcome::bad);
}

}  // namespace
}  // namespace aml::store::relay

#include <gtest/gtest.h>

#include "store/launchers/wire.hpp"

namespace aml::store {
namespace {

TEST(StoreWire, FrameRoundTripIsLittleEndian) {
  std::string frame = FrameWriter().u8(3).u32(0x01020304).str("key").i64(-2).finish();
  ASSERT_EQ(frame.size(), 4u + 1 + 4 + 4 + 3 + 8);
  EXPECT_EQ(frame.substr(0, 4), std::string("\x14\x00\x00\x00", 4));
  EXPECT_EQ(frame.substr(5, 4), std::string("\x04\x03\x02\x01", 4));
  FrameDecoder decoder(1024);
  decoder.feed(frame);
  auto body = decoder.next();
  ASSERT_TRUE(body);
  FieldReader in(*body);
  EXPECT_EQ(in.u8(), 3);
  EXPECT_EQ(in.u32(), 0x01020304u);
  EXPECT_EQ(in.str(10), "key");
  EXPECT_EQ(in.i64(), -2);
  EXPECT_TRUE(in.at_end());
}

TEST(StoreWire, DecoderWaitsForWholeFramesAcrossFeeds) {
  std::string two = FrameWriter().u8(1).finish() + FrameWriter().u8(2).str("xy").finish();
  FrameDecoder decoder(1024);
  for (char byte : two) {
    decoder.feed(std::string_view(&byte, 1));
  }
  EXPECT_EQ(decoder.next(), std::string("\x01", 1));
  EXPECT_EQ(decoder.next(), std::string("\x02\x02\x00\x00\x00xy", 7));
  EXPECT_FALSE(decoder.next());
  EXPECT_FALSE(decoder.mid_frame());
}

TEST(StoreWire, HugeOrEmptyLengthIsAnError) {
  FrameDecoder huge(1024);
  huge.feed(std::string("\xff\xff\xff\x7f", 4));
  EXPECT_FALSE(huge.next());
  EXPECT_TRUE(huge.error());
  FrameDecoder empty(1024);
  empty.feed(std::string("\x00\x00\x00\x00", 4));
  EXPECT_FALSE(empty.next());
  EXPECT_TRUE(empty.error());
}

TEST(StoreWire, ReaderStopsAtTheEndAndRejectsLongStrings) {
  std::string body = FrameWriter().str("abcdef").finish().substr(4);
  FieldReader too_long(body);
  EXPECT_FALSE(too_long.str(5));
  FieldReader short_body(std::string_view(body).substr(0, 6));
  EXPECT_FALSE(short_body.str(100));
  EXPECT_FALSE(short_body.u8());  // fails for good after a short read
}

TEST(StoreWire, ParsesEveryRequestAndRejectsTrailingBytes) {
  Limits limits;
  std::string why;
  auto body = [](FrameWriter w) { return w.finish().substr(4); };
  auto set = parse_request(body(FrameWriter().u8(2).str("k").str("v")), limits, why);
  ASSERT_TRUE(set);
  EXPECT_EQ(set->keys.front(), "k");
  EXPECT_EQ(set->value, "v");
  auto wait =
      parse_request(body(FrameWriter().u8(6).u32(2).str("a").str("b").u32(100)), limits, why);
  ASSERT_TRUE(wait);
  EXPECT_EQ(wait->keys.size(), 2u);
  EXPECT_EQ(wait->timeout_ms, 100u);
  EXPECT_FALSE(parse_request(body(FrameWriter().u8(2).str("k").str("v").u8(0)), limits, why));
  EXPECT_FALSE(parse_request(body(FrameWriter().u8(99)), limits, why));
  EXPECT_FALSE(
      parse_request(body(FrameWriter().u8(2).str("").str("v")), limits, why));  // empty key
  limits.max_value = 2;
  EXPECT_FALSE(parse_request(body(FrameWriter().u8(2).str("k").str("vvv")), limits, why));
  EXPECT_FALSE(parse_request(body(FrameWriter().u8(6).u32(0).u32(5)), limits, why));  // no keys
}

TEST(StoreWire, TokensCompareWhole) {
  EXPECT_TRUE(same_token("secret", "secret"));
  EXPECT_FALSE(same_token("secret", "secreT"));
  EXPECT_FALSE(same_token("secret", "secret2"));
  EXPECT_FALSE(same_token("", "x"));
  EXPECT_TRUE(same_token("", ""));
}

}  // namespace
}  // namespace aml::store

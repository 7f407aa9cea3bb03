// The parsers of the export's stream and encoder options (core/video/encode_options.h).
#include <gtest/gtest.h>

#include "core/video/encode_options.h"

namespace histeq::video {
namespace {

TEST(EncodeOptions, BitRatesTakeFfmpegSuffixes) {
  EXPECT_EQ(parse_bit_rate("4M").value(), 4000000);
  EXPECT_EQ(parse_bit_rate("2500k").value(), 2500000);
  EXPECT_EQ(parse_bit_rate("1.5M").value(), 1500000);
  EXPECT_EQ(parse_bit_rate("800000").value(), 800000);
  for (const char* bad : {"", "fast", "4X", "-1M", "0", "M"}) {
    auto r = parse_bit_rate(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.status().message().find("--bitrate"), std::string::npos);
  }
}

TEST(EncodeOptions, EncoderOptionsAreKeyEqualsValue) {
  auto kv = parse_encoder_option("x265-params=aq-mode=3:psy-rd=1");
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->first, "x265-params");
  EXPECT_EQ(kv->second, "aq-mode=3:psy-rd=1");
  EXPECT_EQ(parse_encoder_option("tune=").value().second, "");
  EXPECT_FALSE(parse_encoder_option("tune"));
  EXPECT_FALSE(parse_encoder_option("=film"));
}

TEST(EncodeOptions, MapsAreFfmpegsSubset) {
  auto all = parse_stream_map("0");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->type, 0);
  EXPECT_EQ(all->index, -1);
  auto second_audio = parse_stream_map("0:a:1");
  ASSERT_TRUE(second_audio);
  EXPECT_EQ(second_audio->type, 'a');
  EXPECT_EQ(second_audio->index, 1);
  auto stream3 = parse_stream_map("0:3");
  ASSERT_TRUE(stream3);
  EXPECT_EQ(stream3->type, 0);
  EXPECT_EQ(stream3->index, 3);
  auto no_subs = parse_stream_map("-0:s");
  ASSERT_TRUE(no_subs);
  EXPECT_TRUE(no_subs->negative);
  EXPECT_EQ(no_subs->type, 's');
  auto maybe = parse_stream_map("0:a:2?");
  ASSERT_TRUE(maybe);
  EXPECT_TRUE(maybe->optional);
  EXPECT_EQ(maybe->index, 2);
  for (const char* bad : {"", "1", "1:a", "0:x", "0:a:b", "0:a:1:2", "a", "0:"}) {
    auto r = parse_stream_map(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.status().message().rfind("-map '", 0), 0u) << r.status().message();
  }
}

}  // namespace
}  // namespace histeq::video

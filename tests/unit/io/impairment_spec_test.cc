#include "io/impairment_spec.hh"

#include <gtest/gtest.h>

using namespace std::chrono_literals;

namespace tinytcp::io {
namespace {

ImpairmentConfig parse_ok(std::string_view spec) {
  const auto c = parse_impairment(spec);
  EXPECT_TRUE(c) << spec << ": " << (c ? "" : c.error());
  return c ? *c : ImpairmentConfig{};
}

TEST(ImpairmentSpecTest, EmptyIsIdentity) {
  EXPECT_TRUE(parse_ok("").is_identity());
  EXPECT_EQ(format_impairment(ImpairmentConfig{}), "");
}

TEST(ImpairmentSpecTest, ParsesEveryKey) {
  const auto c = parse_ok(
      "loss=1%,duplicate=0.02,corrupt=0.5%,reorder=10%,delay=20ms,jitter=500us,"
      "reorder-delay=3ms,rate=10mbit,rate-queue=64k,hold=1000");
  EXPECT_DOUBLE_EQ(c.loss, 0.01);
  EXPECT_DOUBLE_EQ(c.duplicate, 0.02);
  EXPECT_DOUBLE_EQ(c.corrupt, 0.005);
  EXPECT_DOUBLE_EQ(c.reorder, 0.1);
  EXPECT_EQ(c.delay, 20ms);
  EXPECT_EQ(c.jitter, 500us);
  EXPECT_EQ(c.reorder_delay, 3ms);
  EXPECT_EQ(c.rate_bits_per_second, 10'000'000u);
  EXPECT_EQ(c.rate_queue_limit_bytes, 65536u);
  EXPECT_EQ(c.hold_limit_packets, 1000u);
  EXPECT_FALSE(c.burst);
}

TEST(ImpairmentSpecTest, UnitsScale) {
  EXPECT_EQ(parse_ok("delay=7ns").delay, 7ns);
  EXPECT_EQ(parse_ok("delay=1.5s").delay, 1500ms);
  EXPECT_EQ(parse_ok("rate=2.5gbit").rate_bits_per_second, 2'500'000'000u);
  EXPECT_EQ(parse_ok("rate=64kbit").rate_bits_per_second, 64'000u);
  EXPECT_EQ(parse_ok("rate=9600bit").rate_bits_per_second, 9600u);
  EXPECT_EQ(parse_ok("rate-queue=2m").rate_queue_limit_bytes, 2u << 20);
  EXPECT_EQ(parse_ok("rate-queue=1500").rate_queue_limit_bytes, 1500u);
}

TEST(ImpairmentSpecTest, ParsesBurstLoss) {
  const auto two = parse_ok("burst=0.01/0.25");
  ASSERT_TRUE(two.burst);
  EXPECT_DOUBLE_EQ(two.burst->good_to_bad, 0.01);
  EXPECT_DOUBLE_EQ(two.burst->bad_to_good, 0.25);
  EXPECT_DOUBLE_EQ(two.burst->loss_in_good, 0.0);
  EXPECT_DOUBLE_EQ(two.burst->loss_in_bad, 1.0);
  const auto four = parse_ok("burst=1%/30%/0.1%/80%");
  ASSERT_TRUE(four.burst);
  EXPECT_DOUBLE_EQ(four.burst->loss_in_good, 0.001);
  EXPECT_DOUBLE_EQ(four.burst->loss_in_bad, 0.8);
}

TEST(ImpairmentSpecTest, RejectsMalformed) {
  for (const char* bad : {"loss",
                          "loss=",
                          "loss=x",
                          "loss=1.5",
                          "loss=101%",
                          "loss=-0.1",
                          "loss=0.1,loss=0.2",
                          "delay=20",
                          "delay=20min",
                          "delay=ms",
                          "delay=1e3ms",
                          "rate=10",
                          "rate=10mbps",
                          "rate=0bit",
                          "rate-queue=0",
                          "rate-queue=12q",
                          "hold=-1",
                          "hold=1k",
                          "burst=0.1",
                          "burst=0.1/0.2/0.3",
                          "burst=a/b",
                          "jitter= 5ms",
                          "frobnicate=1",
                          "loss=1%,",
                          ",loss=1%",
                          "loss=0.1,burst=0.1/0.2"}) {
    const auto c = parse_impairment(bad);
    EXPECT_FALSE(c) << bad;
  }
}

TEST(ImpairmentSpecTest, ErrorNamesTheItem) {
  const auto c = parse_impairment("delay=5ms,jitter=lots");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("jitter=lots"), std::string::npos) << c.error();
  const auto u = parse_impairment("warp=9");
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().find("warp"), std::string::npos) << u.error();
}

TEST(ImpairmentSpecTest, FormatRoundTrips) {
  for (const char* spec :
       {"loss=0.01", "burst=0.01/0.25/0/1", "duplicate=0.5,corrupt=0.001",
        "rate=10000000bit,rate-queue=4096", "delay=20ms,jitter=5ms",
        "delay=1500us,reorder=0.1,reorder-delay=3ms,hold=100", "delay=3s,jitter=7ns"}) {
    const auto c = parse_ok(spec);
    EXPECT_EQ(format_impairment(c), spec);
    const auto again = parse_ok(format_impairment(c));
    EXPECT_EQ(format_impairment(again), spec);
  }
}

// fmt's shortest form of a small double is "1e-05", which the spec grammar
// (plain decimals only) would not read back; the formatter writes it out.
TEST(ImpairmentSpecTest, TinyProbabilitiesRoundTripInPlainDecimal) {
  for (const char* spec :
       {"loss=0.00001", "reorder=0.0000000000000000000000000000000000000000000000000001",
        "duplicate=0.000012345", "burst=0.0000001/0.5/0/1"}) {
    const auto c = parse_ok(spec);
    const std::string text = format_impairment(c);
    EXPECT_EQ(text.find_first_of("eE", text.find('=')), std::string::npos) << text;
    const auto again = parse_ok(text);
    EXPECT_EQ(format_impairment(again), text);
    EXPECT_EQ(again.loss, c.loss);
    EXPECT_EQ(again.reorder, c.reorder);
    EXPECT_EQ(again.duplicate, c.duplicate);
  }
  EXPECT_EQ(format_impairment(parse_ok("loss=0.00001")), "loss=0.00001");
}

}  // namespace
}  // namespace tinytcp::io

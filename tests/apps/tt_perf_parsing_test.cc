// tt-perf's command-line ranges (common/value_range.hh), its connection
// header (common/perf_header.hh) and its latency percentiles
// (common/latency_samples.hh).

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/latency_samples.hh"
#include "common/perf_header.hh"
#include "common/value_range.hh"
#include "util/random.hh"

namespace tinytcp::apps {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(ValueRangeTest, SizeRangeTakesOneValueOrLowDashHigh) {
  const auto one = parse_size_range("1460", "--size", 1, 65536);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->low, 1460U);
  EXPECT_EQ(one->high, 1460U);
  const auto range = parse_size_range("200-399", "--size", 1, 65536);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->low, 200U);
  EXPECT_EQ(range->high, 399U);
}

TEST(ValueRangeTest, SizeRangeRejectsMalformedAndOutOfBounds) {
  for (const char* bad : {"", "-", "200-", "-399", "399-200", "abc", "12x", "1-2-3", "0", "70000",
                          "1 - 2", "+5", "18446744073709551616"}) {
    const auto r = parse_size_range(bad, "--size", 1, 65536);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().find("--size"), std::string::npos) << r.error();
    EXPECT_EQ(r.error().find('\n'), std::string::npos);
  }
}

TEST(ValueRangeTest, SizeDrawsStayInsideTheRangeAndReachBothEnds) {
  const SizeRange range{200, 203};
  Rng rng(7);
  bool low = false;
  bool high = false;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t v = range.draw(rng);
    ASSERT_GE(v, 200U);
    ASSERT_LE(v, 203U);
    low = low || v == 200;
    high = high || v == 203;
  }
  EXPECT_TRUE(low && high);
}

TEST(ValueRangeTest, GapTakesTheUnitOfTheUpperEndOrOfEach) {
  const auto gap = parse_duration_range("2-19ms", "--gap");
  ASSERT_TRUE(gap);
  EXPECT_EQ(gap->low, milliseconds(2));
  EXPECT_EQ(gap->high, milliseconds(19));
  const auto mixed = parse_duration_range("500us-2ms", "--gap");
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->low, microseconds(500));
  EXPECT_EQ(mixed->high, milliseconds(2));
  const auto one = parse_duration_range("1s", "--gap");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->low, std::chrono::seconds(1));
  EXPECT_EQ(one->high, std::chrono::seconds(1));
  const auto zero = parse_duration_range("0ms", "--gap");
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->high, Duration::zero());
}

TEST(ValueRangeTest, GapRejectsNoUnitBackwardsAndHuge) {
  for (const char* bad :
       {"", "2-19", "19", "ms", "19-2ms", "2ms-1000us", "2-19h", "5000s", "2-x ms", "-3ms"}) {
    const auto r = parse_duration_range(bad, "--gap");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().find("--gap"), std::string::npos);
  }
}

TEST(ValueRangeTest, GapDrawsStayInsideTheRange) {
  const auto gap = parse_duration_range("2-19ms", "--gap");
  ASSERT_TRUE(gap);
  Rng rng(3);
  for (int i = 0; i < 1000; ++i) {
    const Duration d = gap->draw(rng);
    ASSERT_GE(d, milliseconds(2));
    ASSERT_LE(d, milliseconds(19));
  }
}

TEST(PerfHeaderTest, RoundTripsEveryMode) {
  PerfHeader reply;
  reply.mode = PerfMode::Reply;
  reply.request_bytes = 64;
  reply.reply_bytes = 8192;
  const std::string bytes = reply.serialize();
  ASSERT_EQ(bytes.size(), PerfHeader::kSize);
  EXPECT_EQ(bytes, std::string("TTPF\x01\x03\x00\x00\x00\x00\x00\x40\x00\x00\x20\x00", 16));
  const auto parsed = parse_perf_header(bytes);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->mode, PerfMode::Reply);
  EXPECT_EQ(parsed->request_bytes, 64U);
  EXPECT_EQ(parsed->reply_bytes, 8192U);
  for (const PerfMode mode : {PerfMode::Sink, PerfMode::Echo}) {
    PerfHeader h;
    h.mode = mode;
    const auto p = parse_perf_header(h.serialize());
    ASSERT_TRUE(p);
    EXPECT_EQ(p->mode, mode);
  }
}

TEST(PerfHeaderTest, EveryPrefixIsTruncatedAndAWrongStartIsBadMagic) {
  PerfHeader h;
  const std::string bytes = h.serialize();
  for (size_t n = 0; n < PerfHeader::kSize; ++n) {
    const auto p = parse_perf_header(bytes.substr(0, n));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), PerfHeaderError::Truncated) << n;
  }
  EXPECT_EQ(parse_perf_header("GET / HTTP/1.1\r\n").error(), PerfHeaderError::BadMagic);
  EXPECT_EQ(parse_perf_header("TX").error(), PerfHeaderError::BadMagic);
}

TEST(PerfHeaderTest, RejectsBadFields) {
  PerfHeader h;
  h.mode = PerfMode::Reply;
  h.request_bytes = 1;
  h.reply_bytes = 1;
  const std::string good = h.serialize();
  const auto with = [&](size_t at, char c) {
    std::string b = good;
    b[at] = c;
    return parse_perf_header(b);
  };
  EXPECT_EQ(with(4, 2).error(), PerfHeaderError::BadVersion);
  EXPECT_EQ(with(5, 0).error(), PerfHeaderError::BadMode);
  EXPECT_EQ(with(5, 4).error(), PerfHeaderError::BadMode);
  EXPECT_EQ(with(6, 1).error(), PerfHeaderError::BadMode);
  EXPECT_EQ(with(11, 0).error(), PerfHeaderError::BadSize);       // request 0
  EXPECT_EQ(with(12, '\x01').error(), PerfHeaderError::BadSize);  // reply 16 MiB + 1
  EXPECT_EQ(with(5, 1).error(), PerfHeaderError::BadSize);        // sink with sizes
  EXPECT_TRUE(with(15, '\x7f'));
}

TEST(PerfHeaderTest, CountRoundTrips) {
  for (const uint64_t n : {0ULL, 1ULL, 0x1234567890ULL, ~0ULL}) {
    const std::string bytes = serialize_count(n);
    ASSERT_EQ(bytes.size(), 8U);
    EXPECT_EQ(parse_count(bytes), n);
  }
}

TEST(LatencySamplesTest, NearestRankPercentiles) {
  LatencySamples samples;
  for (int i = 100; i >= 1; --i) {
    samples.add(milliseconds(i));
  }
  const LatencySummary s = samples.summary();
  EXPECT_EQ(s.count, 100U);
  EXPECT_EQ(s.p50, milliseconds(50));
  EXPECT_EQ(s.p90, milliseconds(90));
  EXPECT_EQ(s.p99, milliseconds(99));
  EXPECT_EQ(s.max, milliseconds(100));
  EXPECT_EQ(s.mean, microseconds(50500));
}

TEST(LatencySamplesTest, OneSampleAndNone) {
  LatencySamples samples;
  EXPECT_EQ(samples.summary().count, 0U);
  samples.add(milliseconds(7));
  const LatencySummary s = samples.summary();
  EXPECT_EQ(s.p50, milliseconds(7));
  EXPECT_EQ(s.p99, milliseconds(7));
  EXPECT_EQ(s.max, milliseconds(7));
}

TEST(LatencySamplesTest, BoundedReservoirKeepsCountMaxAndMeanExact) {
  LatencySamples samples(64, 5);
  for (int i = 1; i <= 10000; ++i) {
    samples.add(microseconds(i));
  }
  const LatencySummary s = samples.summary();
  EXPECT_EQ(s.count, 10000U);
  EXPECT_EQ(s.max, microseconds(10000));
  EXPECT_EQ(s.mean, std::chrono::nanoseconds(5000500));
  // A uniform sample of 1..10000: its median is nowhere near the first 64.
  EXPECT_GT(s.p50, microseconds(1000));
}

}  // namespace
}  // namespace tinytcp::apps

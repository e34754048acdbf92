#include "util/expected.hh"

#include <gtest/gtest.h>

#include <string>

#include "util/counters.hh"
#include "util/time.hh"

namespace tinytcp {
namespace {

enum class ParseError { Truncated, BadValue, kCount };

Expected<int, ParseError> parse_digit(char c) {
  if (c == '\0') {
    return make_unexpected(ParseError::Truncated);
  }
  if (c < '0' || c > '9') {
    return make_unexpected(ParseError::BadValue);
  }
  return c - '0';
}

TEST(ExpectedTest, HoldsValueOrError) {
  const auto ok = parse_digit('7');
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 7);
  const auto bad = parse_digit('x');
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), ParseError::BadValue);
}

TEST(ExpectedTest, MovesOutValue) {
  Expected<std::string, ParseError> e{std::string("payload")};
  const std::string s = std::move(e).value();
  EXPECT_EQ(s, "payload");
}

TEST(EnumCountersTest, CountsPerEnumerator) {
  EnumCounters<ParseError> c;
  c.count(ParseError::Truncated);
  c.count(ParseError::Truncated);
  c.count(ParseError::BadValue, 5);
  EXPECT_EQ(c[ParseError::Truncated], 2u);
  EXPECT_EQ(c[ParseError::BadValue], 5u);
  EXPECT_EQ(c.total(), 7u);
}

TEST(InstantTest, ArithmeticAndFormatting) {
  using namespace std::chrono_literals;
  const Instant t0;
  const Instant t1 = t0 + 1500ms;
  EXPECT_EQ(t1 - t0, 1500ms);
  EXPECT_LT(t0, t1);
  EXPECT_EQ(to_ms(t1 - t0), 1500);
  EXPECT_EQ(fmt::format("{}", t1), "t+1500ms");
}

}  // namespace
}  // namespace tinytcp

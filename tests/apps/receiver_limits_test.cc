#include "common/receiver_limits.hh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinytcp::apps {
namespace {

// Parses `args` (after the program name); the limits, or the CLI11 error.
struct Parsed {
  ReceiverLimits limits;
  std::string error;
};

Parsed parse(std::vector<std::string> args) {
  CLI::App app;
  Parsed out;
  add_receiver_limit_flags(app, out.limits);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    out.error = e.what();
  }
  return out;
}

TEST(ReceiverLimitsTest, DefaultsAreThePolicyDefaultsAndAWeekOfPartialFiles) {
  const auto p = parse({});
  ASSERT_EQ(p.error, "");
  proto::ReceiverPolicy policy;
  p.limits.apply(policy);
  const proto::ReceiverPolicy defaults;
  EXPECT_EQ(policy.max_files, defaults.max_files);
  EXPECT_EQ(policy.max_session_bytes, UINT64_MAX);
  EXPECT_EQ(policy.free_space_reserve, 64ull << 20);
  EXPECT_EQ(policy.max_refusals_in_a_row, defaults.max_refusals_in_a_row);
  EXPECT_EQ(p.limits.partial_ttl, std::chrono::hours(24 * 7));
}

TEST(ReceiverLimitsTest, FlagsWithUnits) {
  const auto p = parse({"--max-files", "10", "--max-session-bytes", "2G", "--free-reserve", "512M",
                        "--max-refusals", "5", "--partial-ttl", "12h"});
  ASSERT_EQ(p.error, "");
  proto::ReceiverPolicy policy;
  p.limits.apply(policy);
  EXPECT_EQ(policy.max_files, 10u);
  EXPECT_EQ(policy.max_session_bytes, 2ull << 30);
  EXPECT_EQ(policy.free_space_reserve, 512ull << 20);
  EXPECT_EQ(policy.max_refusals_in_a_row, 5u);
  EXPECT_EQ(p.limits.partial_ttl, std::chrono::hours(12));
  EXPECT_EQ(parse({"--partial-ttl", "3600"}).limits.partial_ttl, std::chrono::hours(1));
  EXPECT_EQ(parse({"--partial-ttl", "0"}).limits.partial_ttl, std::chrono::seconds(0));
}

TEST(ReceiverLimitsTest, ZeroSessionBytesMeansNoLimit) {
  proto::ReceiverPolicy policy;
  parse({"--max-session-bytes", "0"}).limits.apply(policy);
  EXPECT_EQ(policy.max_session_bytes, UINT64_MAX);
}

TEST(ReceiverLimitsTest, BadValuesAreOneClearError) {
  EXPECT_NE(parse({"--partial-ttl", "7y"}).error.find("the unit must be s, m, h or d"),
            std::string::npos);
  EXPECT_NE(parse({"--partial-ttl", "soon"}).error.find("not a duration"), std::string::npos);
  EXPECT_NE(parse({"--max-files", "0"}).error, "");
  EXPECT_NE(parse({"--free-reserve", "lots"}).error, "");
}

}  // namespace
}  // namespace tinytcp::apps

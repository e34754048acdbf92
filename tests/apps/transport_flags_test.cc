// The transport flags the file apps and tt-perf share (common/stream_transport.hh):
// the delayed-ACK bound and the timers that follow it, and Nagle's algorithm.

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "common/stream_transport.hh"

namespace tinytcp::apps {
namespace {

using std::chrono::milliseconds;

// Parses `args` as the flags of a command; the options, or the error.
Expected<TransportOptions, std::string> parse(std::vector<std::string> args) {
  CLI::App app;
  TransportFlags flags;
  add_transport_flags(app, flags);
  args.insert(args.begin(), "test");
  std::vector<const char*> argv;
  for (const auto& a : args) {
    argv.push_back(a.c_str());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return make_unexpected(std::string(e.what()));
  }
  return flags.finish();
}

TEST(TransportFlagsTest, TheBulkProfileDelaysAnAckAtMostFiveMs) {
  const auto o = parse({});
  ASSERT_TRUE(o);
  const tcp::TcpConfig c = transfer_tcp_config(*o);
  EXPECT_TRUE(c.delayed_ack);
  EXPECT_EQ(c.delayed_ack_timeout, milliseconds(5));
  EXPECT_EQ(c.tlp_max_ack_delay, milliseconds(10));
  EXPECT_EQ(c.rto_min, milliseconds(30));
  EXPECT_FALSE(c.nagle);  // whole frames: the last one must not wait
}

TEST(TransportFlagsTest, NagleIsOnlyOnWhenAsked) {
  const auto o = parse({"--nagle", "--delayed-ack-ms", "40"});
  ASSERT_TRUE(o);
  EXPECT_TRUE(transfer_tcp_config(*o).nagle);
  const auto kernel = parse({"--transport", "kernel", "--nagle"});
  ASSERT_FALSE(kernel);  // kernel streams set TCP_NODELAY; the flag would be ignored
  EXPECT_NE(kernel.error().find("--nagle applies to the udp and tun transports"),
            std::string::npos);
}

TEST(TransportFlagsTest, ALongerDelayedAckMovesThePeersTimersToo) {
  const auto o = parse({"--delayed-ack-ms", "40"});
  ASSERT_TRUE(o);
  const tcp::TcpConfig c = transfer_tcp_config(*o);
  EXPECT_EQ(c.delayed_ack_timeout, milliseconds(40));
  EXPECT_EQ(c.tlp_max_ack_delay, milliseconds(45));  // the peer's worst case, plus margin
  EXPECT_EQ(c.rto_min, milliseconds(50));            // a delayed ACK is not a loss
}

TEST(TransportFlagsTest, DelayedAckBoundIsChecked) {
  EXPECT_FALSE(parse({"--delayed-ack-ms", "0"}));
  EXPECT_FALSE(parse({"--delayed-ack-ms", "501"}));  // RFC 1122 §4.2.3.2: under 0.5 s
  EXPECT_FALSE(parse({"--delayed-ack-ms", "x"}));
  const auto kernel = parse({"--transport", "kernel", "--delayed-ack-ms", "40"});
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.error().find("--delayed-ack-ms applies to the udp and tun transports"),
            std::string::npos);
}

}  // namespace
}  // namespace tinytcp::apps

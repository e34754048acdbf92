// The pieces together on real time: an EventLoop drives two UdpTunnels on
// 127.0.0.1, one wrapped in an ImpairedAdapter on the SystemClock. The loop must
// wake for the impairment's own deadline, not only for readable fds.

#include <gtest/gtest.h>

#include <vector>

#include "io/event_loop.hh"
#include "io/impaired_adapter.hh"
#include "io/system_clock.hh"
#include "io/udp_tunnel.hh"

using namespace std::chrono_literals;

namespace tinytcp::io {
namespace {

TEST(ImpairedTunnelTest, LoopReleasesDelayedPacketsAtTheirDeadline) {
  UdpTunnelConfig config;
  config.local = UdpEndpoint{0x7f000001, 0};
  UdpTunnel a(config);
  UdpTunnel b(config);
  a.connect(b.local_endpoint());
  b.connect(a.local_endpoint());
  ImpairmentConfig delay;
  delay.delay = 5ms;
  ImpairedAdapter slow_a(a, SystemClock::instance(), delay, {}, 1);

  EventLoop loop;
  std::vector<std::pair<std::string, Instant>> arrived;
  const auto a_id = loop.add_adapter(slow_a, [](std::string_view) {});
  const auto b_id = loop.add_adapter(b, [&](std::string_view p) {
    arrived.emplace_back(std::string(p), loop.now());
    if (arrived.size() == 3) {
      loop.stop();
    }
  });
  const Instant sent = loop.now();
  slow_a.send("one");
  slow_a.send("two");
  loop.add_timer_after(2ms, [&] { slow_a.send("three"); });
  loop.add_timer_after(2s, [&] { loop.stop(); });  // a safety net, never the answer
  loop.run();
  loop.remove_adapter(slow_a, a_id);
  loop.remove_adapter(b, b_id);

  ASSERT_EQ(arrived.size(), 3u);
  EXPECT_EQ(arrived[0].first, "one");
  EXPECT_EQ(arrived[1].first, "two");
  EXPECT_EQ(arrived[2].first, "three");
  EXPECT_GE(arrived[0].second - sent, 5ms);
  EXPECT_GE(arrived[2].second - sent, 7ms);
  EXPECT_EQ(a.stats().packets_sent, 3u);
  // Woken for deadlines and readable fds, not by polling: a handful of wakeups.
  EXPECT_LT(loop.stats().wakeups, 20u);
}

}  // namespace
}  // namespace tinytcp::io

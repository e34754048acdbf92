// Receive-window autotuning over a simulated long path: with a fixed 1 MiB
// window a 100 ms round trip caps a transfer at 1 MiB per round trip
// (84 Mbit/s); with autotuning the window grows with the rate the
// application reads at, the right edge never moves left (RFC 9293
// §3.8.6.2.2) and the receiver's memory stays within the maximum.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "sim/sim_network.hh"
#include "tcp/tcp_receiver.hh"

namespace tinytcp::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using tcp::TcpConfig;

constexpr Duration kRtt = milliseconds(100);
constexpr uint64_t kBytes = 48 << 20;

struct Result {
  bool done = false;
  double mbit_per_s = 0;        // from the first SYN to the last byte read
  double second_half_mbit = 0;  // the second half of the bytes alone
  uint64_t max_window = 0;
  bool edge_moved_left = false;
  uint64_t max_ring = 0;
  uint64_t buffer = 0;
  uint64_t capacity = 0;
};

Result transfer(bool autotune) {
  TcpConfig config;
  config.send_buffer_bytes = 64 << 20;  // the sender is not what limits
  config.autotune_receive_buffer = autotune;
  LinkParams link;
  link.delay = kRtt / 2;
  Network net(config, config, link, link, 7);
  const uint8_t shift = tcp::TcpReceiver::window_shift_for(config);
  Result r;
  std::optional<tcp::Wrap32> last_edge;
  net.ba().set_filter([&](const tcp::TcpSegment& s) {
    if (!s.ack || s.syn) {
      return false;
    }
    const uint64_t window = uint64_t{s.window} << shift;
    r.max_window = std::max(r.max_window, window);
    const tcp::Wrap32 edge = s.ackno + static_cast<uint32_t>(window);
    if (last_edge && tcp::seq_lt(edge, *last_edge)) {
      r.edge_moved_left = true;
    }
    if (!last_edge || tcp::seq_gt(edge, *last_edge)) {
      last_edge = edge;
    }
    return false;
  });
  const std::string chunk(1 << 20, 'z');
  uint64_t written = 0;
  uint64_t read = 0;
  net.b().listen();
  net.a().connect(net.now());
  const Instant start = net.now();
  std::optional<Instant> half;
  r.done = net.run_until([&] { return read == kBytes; }, seconds(60),
                         [&] {
                           while (written < kBytes) {
                             const uint64_t n =
                                 net.a().outbound().push(std::string_view(chunk).substr(
                                     0, std::min<uint64_t>(chunk.size(), kBytes - written)));
                             written += n;
                             if (n == 0) {
                               break;
                             }
                           }
                           auto& in = net.b().inbound();
                           r.max_ring = std::max(r.max_ring, in.ring_bytes());
                           while (in.bytes_buffered() > 0) {
                             read += in.peek().size();
                             in.pop(in.peek().size());
                           }
                           if (!half && read >= kBytes / 2) {
                             half = net.now();
                           }
                           net.a().tick(net.now());
                           net.b().tick(net.now());
                         });
  const double secs = std::chrono::duration<double>(net.now() - start).count();
  r.mbit_per_s = static_cast<double>(read) * 8 / secs / 1e6;
  if (!half) {
    return r;
  }
  r.second_half_mbit = static_cast<double>(kBytes / 2) * 8 /
                       std::chrono::duration<double>(net.now() - *half).count() / 1e6;
  r.buffer = net.b().receiver().buffer_bytes();
  r.capacity = net.b().inbound().capacity();
  std::printf(
      "autotune %s: 48 MiB in %.2f s virtual: %.1f Mbit/s, second half %.1f Mbit/s, largest "
      "window %llu, largest ring %llu\n",
      autotune ? "on" : "off", secs, r.mbit_per_s, r.second_half_mbit,
      static_cast<unsigned long long>(r.max_window), static_cast<unsigned long long>(r.max_ring));
  return r;
}

TEST(ReceiveWindowTest, FixedWindowCapsALongPath) {
  const Result r = transfer(false);
  ASSERT_TRUE(r.done);
  EXPECT_LE(r.max_window, (1u << 20) + (1u << 20) / 32 + 1024);
  // 1 MiB per 100 ms is 84 Mbit/s; the ramp-up costs a little more.
  EXPECT_LE(r.mbit_per_s, 84.0);
  EXPECT_LE(r.second_half_mbit, 84.0 * 1.04);
  EXPECT_FALSE(r.edge_moved_left);
}

TEST(ReceiveWindowTest, AutotunedWindowGrowsAndThroughputWithIt) {
  const Result fixed = transfer(false);
  const Result tuned = transfer(true);
  ASSERT_TRUE(tuned.done);
  EXPECT_GT(tuned.max_window, 4u << 20);
  EXPECT_GT(tuned.mbit_per_s, 3 * fixed.mbit_per_s);
  EXPECT_GT(tuned.second_half_mbit, 84.0 * 4);
  EXPECT_FALSE(tuned.edge_moved_left);
  // Memory: the buffer stops at the maximum, the ring within the stream.
  const uint64_t max = TcpConfig{}.receive_buffer_max_bytes;
  EXPECT_LE(tuned.buffer, max);
  EXPECT_LE(tuned.max_ring, tuned.capacity);
  EXPECT_LE(tuned.capacity, max + max / 4);
}

}  // namespace
}  // namespace tinytcp::sim

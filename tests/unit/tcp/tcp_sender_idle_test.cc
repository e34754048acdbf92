// A sender that pauses: RFC 5681 §4.1 restart after idle (Linux's
// tcp_slow_start_after_idle, TcpConfig::slow_start_after_idle) and CUBIC
// resuming its curve where it stopped (RFC 9438 §5.8), seen as the number of
// segments the sender puts on the wire when the application writes again.
// The algorithms' side is in congestion_idle_test.cc.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tcp/congestion/cubic.hh"
#include "tcp/tcp_sender.hh"

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kMss = 1000;  // the peer's MSS: 1000 payload bytes per segment
constexpr Duration kRtt = 10ms;

class SenderIdleTest : public ::testing::Test {
 protected:
  static constexpr Wrap32 kIsn{0xfffff000u};
  static constexpr Wrap32 kPeerSeq{77};

  SenderIdleTest() {
    config.mss = 1460;
    config.congestion_control = "reno";
  }

  // A new connection: SYN, and the SYN-ACK one RTT later. `cc`, when given,
  // replaces the algorithm TcpConfig names.
  void establish(std::unique_ptr<CongestionControl> cc = nullptr) {
    sender.emplace(config, kIsn);
    if (cc) {
      sender->set_congestion_control(std::move(cc));
    }
    sender->push(now, sink());
    PeerOptions peer;
    peer.mss = kMss;
    peer.send_window_shift = 4;  // about 1 MiB: the peer's window never limits
    sender->set_peer_options(peer);
    now += kRtt;
    TcpSegment syn_ack;
    syn_ack.syn = true;
    syn_ack.ack = true;
    syn_ack.seqno = kPeerSeq - 1;
    syn_ack.ackno = Wrap32::wrap(1, kIsn);
    syn_ack.window = 65535;
    ASSERT_EQ(sender->receive(syn_ack, now), AckResult::Advanced);
    in_flight.clear();
  }

  // The application writes `segments` full segments; returns how many the
  // sender sent at once.
  size_t write(size_t segments) {
    const size_t before = in_flight.size();
    const std::string data(segments * kMss, 'x');
    EXPECT_EQ(sender->outbound().push(data), data.size());
    sender->push(now, sink());
    return in_flight.size() - before;
  }
  // Every segment in flight is acknowledged, one ACK each, spread over one
  // RTT; each ACK lets the sender send what its window then allows.
  void round_trip() {
    std::vector<uint64_t> flight;
    flight.swap(in_flight);
    for (const uint64_t end : flight) {
      now += kRtt / static_cast<int64_t>(flight.size());
      TcpSegment ack;
      ack.ack = true;
      ack.seqno = kPeerSeq;
      ack.ackno = Wrap32::wrap(end, kIsn);
      ack.window = 65535;
      ASSERT_EQ(sender->receive(ack, now), AckResult::Advanced);
      sender->push(now, sink());
    }
  }
  // Round trips until everything written is acknowledged.
  void finish() {
    while (!in_flight.empty()) {
      round_trip();
    }
    ASSERT_EQ(sender->sequence_numbers_in_flight(), 0u);
  }
  // Nothing to send for `d`: timers may run, nothing leaves.
  void pause(Duration d) {
    now += d;
    sender->tick(now, sink());
    EXPECT_TRUE(in_flight.empty()) << "sent while idle";
  }
  uint64_t cwnd() const { return sender->state().cwnd; }
  Duration rto() const { return sender->state().rto; }

  // A bulk write of 60 segments, sent and acknowledged: slow start takes
  // Reno's window from 10 to well above it.
  uint64_t grow_window() {
    write(60);
    finish();
    EXPECT_GE(cwnd(), 25 * kMss) << "the window grew past the restart window";
    EXPECT_EQ(cwnd() % kMss, 0u);
    return cwnd() / kMss;
  }

  TcpConfig config;
  std::optional<TcpSender> sender;
  Instant now;
  std::vector<uint64_t> in_flight;  // absolute end of each data segment sent, in order

  TcpSender::Transmit sink() {
    return [this](const TcpSegment& seg) {
      if (!seg.payload.empty()) {
        const uint64_t start = static_cast<uint32_t>(seg.seqno.raw() - kIsn.raw());
        in_flight.push_back(start + seg.sequence_length());
      }
    };
  }
};

TEST_F(SenderIdleTest, RenoRestartsFromTheRestartWindowAfterALongIdle) {
  establish();
  grow_window();
  pause(20 * rto());
  // RFC 5681 §4.1: RW = min(IW, cwnd) = the 10-segment initial window.
  EXPECT_EQ(write(100), 10u);
  EXPECT_EQ(cwnd(), 10 * kMss);
}

TEST_F(SenderIdleTest, RenoHalvesAfterAnIdleOfOneAndAHalfRto) {
  // Linux's decay (RFC 2861 §3): one halving for each RTO beyond the first.
  establish();
  const uint64_t before = grow_window();
  pause(rto() + rto() / 2);
  EXPECT_EQ(write(100), before / 2);
}

TEST_F(SenderIdleTest, RenoKeepsItsWindowAfterAnIdleShorterThanTheRto) {
  establish();
  const uint64_t before = grow_window();
  // The last segment left about an RTT before its ACK: the sender has been
  // idle for less than pause + RTT.
  pause(rto() - 2 * kRtt);
  EXPECT_EQ(write(100), before);
}

TEST_F(SenderIdleTest, SwitchedOffTheWindowSurvivesIdle) {
  config.slow_start_after_idle = false;
  establish();
  const uint64_t before = grow_window();
  pause(20 * rto());
  EXPECT_EQ(write(100), before);
}

TEST_F(SenderIdleTest, TheRestartWindowIsNeverAboveCwnd) {
  // After a timeout cwnd starts again from one segment: a restart after
  // idle must not raise it to the initial window (RW = min(IW, cwnd)).
  config.rto_min = 50ms;
  establish();
  write(1);
  now += 4 * config.rto_min;
  sender->tick(now, sink());  // the RTO fires: a retransmission, cwnd = 1 SMSS
  ASSERT_EQ(in_flight.size(), 2u) << "the segment and its retransmission";
  in_flight.pop_back();
  round_trip();
  const uint64_t before = cwnd() / kMss;
  ASSERT_LT(before, 10u);
  pause(20 * rto());
  EXPECT_EQ(write(10), before);
}

// CUBIC in congestion avoidance from the start: a loss at 40 segments leaves
// W_max = 40, cwnd = ssthresh = 28 (set on the algorithm before the
// connection uses it).
std::unique_ptr<Cubic> cubic_after_a_loss() {
  auto cc = std::make_unique<Cubic>(CongestionParams{kMss, 10});
  AckEvent ack;
  ack.bytes_acked = kMss;
  while (cc->cwnd_segments() < 40) {
    cc->on_ack(ack);
  }
  LossEvent loss;
  loss.flight_size = cc->cwnd();
  cc->on_congestion_event(loss);
  return cc;
}

TEST_F(SenderIdleTest, CubicResumesItsCurveAfterIdleWithoutAJump) {
  // With slow_start_after_idle off, as Linux's commit 30927520 found: the
  // idle time in t made W_cubic(t) jump past W_max, and cwnd grew 1.5x per
  // round trip as soon as the application wrote again.
  config.slow_start_after_idle = false;
  auto run = [&](Duration idle) {
    establish(cubic_after_a_loss());
    // A bulk write, cwnd-limited until its tail drains (those last ACKs are
    // application-limited), then nothing is sent for `idle`.
    write(300);
    finish();
    pause(idle);
    const uint64_t before = cwnd();
    EXPECT_EQ(write(400), before / kMss);
    round_trip();  // one round trip of cwnd-limited ACKs
    return std::make_pair(before, cwnd());
  };
  const auto [before_idle, after_idle] = run(30s);
  const auto [before_pause, after_pause] = run(5ms);
  EXPECT_EQ(before_idle, before_pause);
  EXPECT_NEAR(static_cast<double>(after_idle), static_cast<double>(after_pause), kMss)
      << "a round trip after 30 s idle grows as one after 5 ms";
  EXPECT_LT(after_idle, before_idle + before_idle / 10) << "no jump";
}

}  // namespace
}  // namespace tinytcp::tcp

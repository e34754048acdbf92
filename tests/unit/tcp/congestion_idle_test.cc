// Restart after idle (RFC 5681 §4.1 with RFC 2861 §3's decay, as Linux's
// tcp_cwnd_restart) and CUBIC's clock leaving out idle and
// application-limited time (RFC 9438 §5.8), on the algorithms alone. The
// sender's side of it (when the event is reported) is in
// tcp_sender_idle_test.cc.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tcp/congestion/cubic.hh"
#include "tcp/congestion/reno.hh"

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kMss = 1000;
constexpr CongestionParams kParams{kMss, 10};  // IW = 10 segments
constexpr Duration kRto = 1s;

TransmitStartEvent transmit_start(Instant now, Duration idle, bool restart = true) {
  return TransmitStartEvent{now, idle, kRto, restart};
}

// --- the restart window ---------------------------------------------------

TEST(WindowAfterIdleTest, NotAfterAnIdlePeriodOfAtMostOneRto) {
  EXPECT_EQ(window_after_idle(40, 10, 0ms, kRto), 40);
  EXPECT_EQ(window_after_idle(40, 10, kRto, kRto), 40);  // "exceeding the RTO"
}

TEST(WindowAfterIdleTest, HalvesOncePerRtoBeyondTheFirst) {
  // Linux: while ((delta -= rto) > 0 && cwnd > restart) cwnd >>= 1.
  EXPECT_EQ(window_after_idle(80, 10, kRto + 1ms, kRto), 40);
  EXPECT_EQ(window_after_idle(80, 10, 2 * kRto, kRto), 40);
  EXPECT_EQ(window_after_idle(80, 10, 2 * kRto + 1ms, kRto), 20);
  EXPECT_EQ(window_after_idle(80, 10, 3 * kRto + 1ms, kRto), 10);
}

TEST(WindowAfterIdleTest, NeverBelowTheRestartWindow) {
  // RW = min(IW, cwnd): a long idle period ends at the initial window...
  EXPECT_EQ(window_after_idle(80, 10, 100 * kRto, kRto), 10);
  EXPECT_EQ(window_after_idle(30, 10, 3 * kRto + 1ms, kRto), 10);  // 30 -> 15 -> 7.5: 10
  // ...and a window already below it stays (RFC 5681 §4.1 never raises it).
  EXPECT_EQ(window_after_idle(4, 10, 100 * kRto, kRto), 4);
}

// --- Reno -----------------------------------------------------------------

AckEvent acked(uint64_t bytes) {
  AckEvent a;
  a.bytes_acked = bytes;
  a.cwnd_limited = true;
  return a;
}

// Reno in congestion avoidance at 16 segments with ssthresh 10 segments.
Reno reno_in_congestion_avoidance() {
  Reno cc(kParams);
  LossEvent loss;
  loss.flight_size = 20 * kMss;
  cc.on_congestion_event(loss);  // ssthresh = cwnd = 10 segments
  while (cc.cwnd() < 16 * kMss) {
    cc.on_ack(acked(kMss));
  }
  return cc;
}

TEST(RenoIdleTest, LongIdleRestartsFromTheRestartWindow) {
  Reno cc = reno_in_congestion_avoidance();
  ASSERT_EQ(cc.cwnd(), 16u * kMss);
  ASSERT_EQ(cc.ssthresh(), 10u * kMss);
  cc.on_transmit_start(transmit_start(Instant{}, 10 * kRto));
  EXPECT_EQ(cc.cwnd(), 10u * kMss);  // RW = min(IW, cwnd)
  // ssthresh keeps 3/4 of the old window: slow start climbs back to 12.
  EXPECT_EQ(cc.ssthresh(), 12u * kMss);
  cc.on_ack(acked(kMss));
  EXPECT_EQ(cc.cwnd(), 11u * kMss) << "slow start";
}

TEST(RenoIdleTest, IdleOfOneAndAHalfRtoHalvesTheWindow) {
  Reno cc(kParams);
  for (int i = 0; i < 30; ++i) {
    cc.on_ack(acked(kMss));  // slow start to 40 segments
  }
  ASSERT_EQ(cc.cwnd(), 40u * kMss);
  cc.on_transmit_start(transmit_start(Instant{}, kRto + kRto / 2));
  EXPECT_EQ(cc.cwnd(), 20u * kMss);
  EXPECT_EQ(cc.ssthresh(), std::numeric_limits<uint32_t>::max()) << "no loss yet: still unbounded";
}

TEST(RenoIdleTest, IdleOfAtMostAnRtoKeepsTheWindow) {
  Reno cc = reno_in_congestion_avoidance();
  cc.on_transmit_start(transmit_start(Instant{}, kRto));
  EXPECT_EQ(cc.cwnd(), 16u * kMss);
  EXPECT_EQ(cc.ssthresh(), 10u * kMss);
}

TEST(RenoIdleTest, SwitchedOffNothingChanges) {
  Reno cc = reno_in_congestion_avoidance();
  cc.on_transmit_start(transmit_start(Instant{}, 100 * kRto, false));
  EXPECT_EQ(cc.cwnd(), 16u * kMss);
  EXPECT_EQ(cc.ssthresh(), 10u * kMss);
}

// --- CUBIC ----------------------------------------------------------------

// One CUBIC flow on its own clock, with the verbs of cubic_test.cc.
struct CubicFlow {
  Cubic cc{kParams};
  Instant now;

  void ack(bool cwnd_limited = true, Duration rtt = 100ms) {
    AckEvent a;
    a.now = now;
    a.bytes_acked = kMss;
    a.srtt = rtt;
    a.min_rtt = rtt;
    a.cwnd_limited = cwnd_limited;
    cc.on_ack(a);
  }
  // Slow start to `segments`, then a congestion event there.
  void lose_at(double segments) {
    while (cc.cwnd_segments() < segments) {
      ack();
    }
    LossEvent l;
    l.now = now;
    l.flight_size = cc.cwnd();
    cc.on_congestion_event(l);
  }
  // A cwnd's worth of ACKs spread over one round trip.
  void round_trip(Duration rtt = 100ms) {
    const auto segments = static_cast<int>(cc.cwnd_segments());
    for (int i = 0; i < segments; ++i) {
      now += rtt / segments;
      ack(true, rtt);
    }
  }
  void round_trips(int n) {
    for (int i = 0; i < n; ++i) {
      round_trip();
    }
  }
};

// Two identical flows 5 round trips into congestion avoidance after a loss
// at 100 segments (W_max 100, cwnd 70, K = 4.2 s): one idles, the other is
// the reference that did not.
class CubicIdleTest : public ::testing::Test {
 protected:
  CubicIdleTest() {
    for (CubicFlow* f : {&idle, &reference}) {
      f->lose_at(100);
      f->round_trips(5);
    }
  }
  CubicFlow idle;
  CubicFlow reference;
};

TEST_F(CubicIdleTest, IdleTimeIsLeftOutOfTheEpoch) {
  // slow_start_after_idle off, where Linux found the jump (commit 30927520):
  // after 30 s idle, W_cubic(t) would be far past W_max, and cwnd would grow
  // 1.5x per round trip.
  const Instant epoch = *idle.cc.epoch_start();
  idle.now += 30s;
  idle.cc.on_transmit_start(transmit_start(idle.now, 30s, false));
  EXPECT_EQ(*idle.cc.epoch_start(), epoch + 30s);
  const double before = idle.cc.cwnd_segments();
  idle.round_trips(5);
  reference.round_trips(5);
  EXPECT_NEAR(idle.cc.cwnd_segments(), reference.cc.cwnd_segments(), 1e-6)
      << "the curve resumes where it stopped";
  EXPECT_LT(idle.cc.cwnd_segments(), 1.2 * before) << "not 1.5x per round trip";
}

TEST_F(CubicIdleTest, EpochNeverStartsInTheFuture) {
  // An idle period longer than the epoch so far moves the start to now, no further.
  idle.now += 30s;
  idle.cc.on_transmit_start(transmit_start(idle.now, 60s, false));
  EXPECT_EQ(*idle.cc.epoch_start(), idle.now);
}

TEST_F(CubicIdleTest, ApplicationLimitedTimeIsLeftOutOfTheEpoch) {
  // 20 s of ACKs while the application kept less than cwnd in flight: no
  // growth (RFC 9438 §5.8), and t does not advance either.
  const double before = idle.cc.cwnd_segments();
  for (int i = 0; i < 200; ++i) {
    idle.ack(false);
    idle.now += 100ms;
  }
  EXPECT_EQ(idle.cc.cwnd_segments(), before);
  idle.round_trips(5);
  reference.round_trips(5);
  // The clock stopped at the first application-limited ACK and restarted at
  // the first cwnd-limited one, one ACK spacing (1/70 RTT) late.
  EXPECT_NEAR(idle.cc.cwnd_segments(), reference.cc.cwnd_segments(), 0.01 * before);
}

TEST_F(CubicIdleTest, IdleAfterApplicationLimitedTimeIsLeftOutOnce) {
  // The flow went idle while application limited: the stopped clock already
  // covers the idle period, so it is not subtracted a second time (which
  // would move the curve back by 30 s).
  idle.now += 100ms;
  idle.ack(false);
  idle.now += 30s;
  idle.cc.on_transmit_start(transmit_start(idle.now, 30s, false));
  reference.now += 100ms;  // the reference only spends the ACK's 100 ms
  idle.round_trips(5);
  reference.round_trips(5);
  EXPECT_NEAR(idle.cc.cwnd_segments(), reference.cc.cwnd_segments(),
              0.01 * reference.cc.cwnd_segments());
}

TEST_F(CubicIdleTest, LongIdleRestartsTheWindowAndTheEpoch) {
  idle.round_trips(30);  // near the plateau, so 3/4 of cwnd is above ssthresh (70)
  const double old = idle.cc.cwnd_segments();
  ASSERT_GT(0.75 * old, 70.0);
  idle.now += 10 * kRto;
  idle.cc.on_transmit_start(transmit_start(idle.now, 10 * kRto));
  EXPECT_EQ(idle.cc.cwnd_segments(), 10.0);  // RW = IW
  EXPECT_EQ(idle.cc.ssthresh(), static_cast<uint64_t>(0.75 * old * kMss));
  EXPECT_FALSE(idle.cc.epoch_start()) << "congestion avoidance after slow start is a new epoch";
  EXPECT_EQ(idle.cc.w_max(), 100.0) << "with the old plateau";
  idle.ack();
  EXPECT_EQ(idle.cc.cwnd_segments(), 11.0) << "slow start";
}

TEST_F(CubicIdleTest, IdleOfAtMostAnRtoKeepsTheWindowAndShiftsTheEpoch) {
  const double old = idle.cc.cwnd_segments();
  const Instant epoch = *idle.cc.epoch_start();
  idle.now += kRto;
  idle.cc.on_transmit_start(transmit_start(idle.now, kRto));
  EXPECT_EQ(idle.cc.cwnd_segments(), old);
  EXPECT_EQ(*idle.cc.epoch_start(), epoch + kRto);
}

}  // namespace
}  // namespace tinytcp::tcp

#include "tcp/congestion/bbr.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kMss = 1000;

// Drives Bbr with synthetic events over a fluid model of one path: a
// bottleneck of `capacity` bytes per second, a propagation RTT of `rtt`, and
// a share `loss` of the segments lost at random. Each round trip the sender
// keeps what cwnd and the pacing rate allow in flight; every segment that arrives is
// acknowledged by its own ACK, spread over the round, with the rate sample a
// sender would build for it (draft-cheng: delivered over the flight's time).
class BbrTest : public ::testing::Test {
 protected:
  Bbr cc{CongestionParams{kMss, 10}};
  Instant now;
  double capacity = 10e6;  // 10 MB/s: with 20 ms a BDP of 200 segments
  Duration rtt = 20ms;
  Duration queueing{0};  // extra delay in every RTT sample
  double last_round_seconds = 0.020;
  double loss = 0;
  double loss_credit = 0;
  uint64_t delivered = 0;
  int congestion_events_left = 0;      // report this many congestion events at losses
  std::optional<uint64_t> lose_index;  // lose this segment of the next round

  std::vector<Bbr::Mode> modes;  // every mode seen, in order
  double bdp() const { return capacity * to_seconds(rtt); }

  // One round trip; returns the bytes sent in it.
  uint64_t round_trip() {
    const double pace = static_cast<double>(*cc.pacing_rate());
    // Paced for a round trip, which is longer than `rtt` by the queue the
    // last flight built.
    const auto by_pacing = static_cast<uint64_t>(pace * last_round_seconds);
    const uint64_t segments = std::max<uint64_t>(1, std::min(cc.cwnd(), by_pacing) / kMss);
    const uint64_t flight = segments * kMss;
    // Faster than the bottleneck: the flight queues, the round takes longer.
    const double seconds = std::max(to_seconds(rtt), static_cast<double>(flight) / capacity);
    const Duration round =
        std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
    last_round_seconds = seconds;
    const double rate = static_cast<double>(flight) / seconds * (1 - loss);
    for (uint64_t i = 0; i < segments; ++i) {
      cc.on_packet_sent(now, kMss, (i + 1) * kMss);
    }
    const uint64_t prior_delivered = delivered;
    const Instant start = now;
    // ACK-clocked: each ACK's room is refilled at once, so the pipe holds
    // the flight all round long.
    const uint64_t in_flight = flight - kMss;
    uint64_t lost_unreported = 0;
    for (uint64_t i = 0; i < segments; ++i) {
      now = start + round * static_cast<int64_t>(i + 1) / static_cast<int64_t>(segments);
      loss_credit += loss;
      if (lose_index && *lose_index == i) {
        lose_index.reset();
        lost_unreported += kMss;
        continue;
      }
      if (loss_credit >= 1) {
        loss_credit -= 1;
        lost_unreported += kMss;  // found lost at the next ACK (its SACK)
        continue;
      }
      AckEvent a;
      a.now = now;
      a.bytes_acked = kMss;
      delivered += kMss;
      a.delivered_total = delivered;
      a.prior_in_flight = flight;
      a.in_flight = in_flight;
      a.rtt = round + queueing;
      a.min_rtt = rtt;
      a.srtt = round + queueing;
      RateSample rs;
      rs.prior_delivered = prior_delivered;
      rs.delivered = delivered - prior_delivered;
      rs.interval = round;
      rs.delivery_rate = static_cast<uint64_t>(rate);
      rs.rtt = a.rtt;
      rs.newly_lost = lost_unreported;
      a.rate = rs;
      cc.on_delivery(a);
      if (modes.empty() || modes.back() != cc.mode()) {
        modes.push_back(cc.mode());
      }
      if (lost_unreported > 0 && congestion_events_left > 0) {
        --congestion_events_left;
        LossEvent l;
        l.now = now;
        l.flight_size = in_flight;
        l.in_flight = in_flight;
        cc.on_congestion_event(l);
      }
      lost_unreported = 0;
      cc.on_ack(a);
    }
    now = start + round;
    return flight;
  }

  // Rounds until PROBE_BW (at most `limit`); false if it never came.
  bool reach_probe_bw(int limit = 60) {
    for (int i = 0; i < limit; ++i) {
      round_trip();
      if (cc.mode() == Bbr::Mode::ProbeBw) {
        return true;
      }
    }
    return false;
  }
};

TEST_F(BbrTest, StartsInStartupWithTheInitialWindow) {
  EXPECT_EQ(cc.name(), "bbr");
  EXPECT_EQ(cc.mode(), Bbr::Mode::Startup);
  EXPECT_EQ(cc.cwnd(), 10u * kMss);
  EXPECT_NEAR(cc.pacing_gain(), 2.0 / std::log(2.0), 1e-3);
  // draft §4.2.1: high_gain x initial window / 1 ms before any RTT is known.
  EXPECT_NEAR(static_cast<double>(*cc.pacing_rate()), 2.885 * 10 * kMss / 0.001, 1.0);
}

TEST_F(BbrTest, InitialPacingRateComesFromTheFirstRtt) {
  round_trip();
  const double first = static_cast<double>(*cc.pacing_rate());
  // high_gain x (initial window / srtt): the first samples measured no more.
  EXPECT_NEAR(first, 2.885 * 10 * kMss / 0.020, 0.01 * first);
}

TEST_F(BbrTest, StartupGrowsThenFindsTheBandwidth) {
  std::vector<uint64_t> flights;
  while (cc.mode() == Bbr::Mode::Startup && flights.size() < 40) {
    flights.push_back(round_trip());
  }
  ASSERT_LT(flights.size(), 40u) << "never left STARTUP";
  // Each early round sends about high_gain times the last one's delivery.
  ASSERT_GE(flights.size(), 4u);
  EXPECT_GE(flights[2], 2 * flights[1]);
  EXPECT_GE(flights[3], 2 * flights[2]);
  EXPECT_TRUE(cc.filled_pipe());
  EXPECT_NEAR(cc.bandwidth(), capacity, 0.02 * capacity);
  ASSERT_TRUE(cc.min_rtt());
  EXPECT_EQ(*cc.min_rtt(), rtt);
}

TEST_F(BbrTest, DrainsTheQueueThenCyclesThroughProbeBw) {
  for (int i = 0; i < 60; ++i) {
    round_trip();
  }
  ASSERT_GE(modes.size(), 3u);
  EXPECT_EQ(modes[0], Bbr::Mode::Startup);
  EXPECT_EQ(modes[1], Bbr::Mode::Drain);
  EXPECT_EQ(modes[2], Bbr::Mode::ProbeBw);

  std::set<double> gains;
  for (int i = 0; i < 40; ++i) {
    round_trip();
    ASSERT_EQ(cc.mode(), Bbr::Mode::ProbeBw);
    gains.insert(cc.pacing_gain());
    // draft §4.2.3.2: cwnd = 2 x BDP + 3 send quanta (64 KB at most each).
    EXPECT_GE(cc.cwnd(), static_cast<uint64_t>(2 * bdp()));
    EXPECT_LE(cc.cwnd(), static_cast<uint64_t>(2 * bdp()) + 3 * 65536);
  }
  EXPECT_EQ(gains, (std::set<double>{0.75, 1.0, 1.25}));
  EXPECT_EQ(cc.cwnd_gain(), 2.0);
}

TEST_F(BbrTest, PacingRateTracksTheEstimate) {
  ASSERT_TRUE(reach_probe_bw());
  for (int i = 0; i < 16; ++i) {
    round_trip();
    const double expected = cc.pacing_gain() * cc.bandwidth();
    EXPECT_NEAR(static_cast<double>(*cc.pacing_rate()), expected, 0.001 * expected);
  }
  EXPECT_NEAR(cc.bandwidth(), capacity, 0.02 * capacity);
  // The bottleneck halves: once the 10-round window has passed, so do the
  // estimate and the rate.
  capacity /= 2;
  for (int i = 0; i < 14; ++i) {
    round_trip();
  }
  EXPECT_NEAR(cc.bandwidth(), capacity, 0.05 * capacity);
  const double expected = cc.pacing_gain() * capacity;
  EXPECT_NEAR(static_cast<double>(*cc.pacing_rate()), expected, 0.06 * expected);
}

TEST_F(BbrTest, MinRttExpiryEntersProbeRttWithFourSegments) {
  ASSERT_TRUE(reach_probe_bw());
  const uint64_t before = cc.cwnd();
  // From now on every RTT sample is 5 ms above the minimum, so the minimum
  // is not refreshed and expires after 10 s.
  queueing = 5ms;
  const Instant since = now;
  while (cc.mode() != Bbr::Mode::ProbeRtt && now - since < 11s) {
    round_trip();
  }
  ASSERT_EQ(cc.mode(), Bbr::Mode::ProbeRtt);
  EXPECT_GE(now - since, 10s);
  EXPECT_EQ(cc.cwnd(), 4u * kMss);
  EXPECT_EQ(cc.pacing_gain(), 1.0);
  // 200 ms and a round at 4 segments, then back to PROBE_BW with the window
  // from before and the new minimum.
  const Instant entered = now;
  while (cc.mode() == Bbr::Mode::ProbeRtt && now - entered < 1s) {
    EXPECT_EQ(cc.cwnd(), 4u * kMss);
    round_trip();
  }
  EXPECT_EQ(cc.mode(), Bbr::Mode::ProbeBw);
  EXPECT_GE(now - entered, 200ms);
  EXPECT_GE(cc.cwnd(), before);
  ASSERT_TRUE(cc.min_rtt());
  EXPECT_EQ(*cc.min_rtt(), 25ms);
}

TEST_F(BbrTest, RandomLossConservesForOneRoundOnly) {
  ASSERT_TRUE(reach_probe_bw());
  for (int i = 0; i < 10; ++i) {
    round_trip();
  }
  for (int episode = 0; episode < 10; ++episode) {
    // One lost segment and a congestion event in this round...
    lose_index = 50;
    congestion_events_left = 1;
    const uint64_t before = cc.cwnd();
    round_trip();
    EXPECT_EQ(congestion_events_left, 0);
    EXPECT_TRUE(cc.conserving()) << "packet conservation until the round ends";
    EXPECT_LT(cc.cwnd(), before);
    // ...and none in the next: the window is the model's again, not halved.
    round_trip();
    EXPECT_FALSE(cc.conserving());
    EXPECT_GE(cc.cwnd(), static_cast<uint64_t>(2 * bdp())) << "episode " << episode;
    EXPECT_NEAR(cc.bandwidth(), capacity, 0.02 * capacity);
  }
}

TEST_F(BbrTest, HeavyRandomLossDoesNotStarveTheEstimate) {
  ASSERT_TRUE(reach_probe_bw());
  // Half of every flight is lost. Uncompensated, the 1.25 probe would
  // deliver 0.625 of the estimate and the estimate would decay round by
  // round; compensated, the goodput holds at capacity x (1 - loss).
  loss = 0.5;
  for (int i = 0; i < 100; ++i) {
    round_trip();
  }
  EXPECT_NEAR(cc.loss_ratio(), 0.5, 0.05);
  EXPECT_GE(cc.bandwidth(), 0.9 * capacity * (1 - loss));
  EXPECT_EQ(cc.mode(), Bbr::Mode::ProbeBw);
  // With no more loss the compensation fades and the estimate recovers.
  loss = 0;
  for (int i = 0; i < 60; ++i) {
    round_trip();
  }
  EXPECT_LT(cc.loss_ratio(), 0.01);
  EXPECT_NEAR(cc.bandwidth(), capacity, 0.05 * capacity);
}

TEST_F(BbrTest, TimeoutCollapsesTheWindowUntilARetransmissionIsDelivered) {
  ASSERT_TRUE(reach_probe_bw());
  for (int i = 0; i < 10; ++i) {
    round_trip();
  }
  LossEvent l;
  l.now = now;
  l.flight_size = cc.cwnd();
  cc.on_rto(l);
  EXPECT_EQ(cc.cwnd(), kMss);
  EXPECT_TRUE(cc.conserving());
  round_trip();  // one segment, sent after the timeout, delivered
  EXPECT_FALSE(cc.conserving());
  EXPECT_GE(cc.cwnd(), static_cast<uint64_t>(2 * bdp()));
  EXPECT_NEAR(cc.bandwidth(), capacity, 0.02 * capacity);
}

TEST_F(BbrTest, RecoveryExitRestoresThePriorWindow) {
  ASSERT_TRUE(reach_probe_bw());
  const uint64_t before = cc.cwnd();
  LossEvent l;
  l.now = now;
  l.in_flight = before / 4;
  cc.on_congestion_event(l);
  EXPECT_EQ(cc.cwnd(), before / 4 + kMss);
  cc.on_recovery_exit(AckEvent{});
  EXPECT_EQ(cc.cwnd(), before);
  EXPECT_FALSE(cc.conserving());
}

TEST_F(BbrTest, AppLimitedSamplesDoNotLowerTheEstimate) {
  ASSERT_TRUE(reach_probe_bw());
  const double bw = cc.bandwidth();
  AckEvent a;
  for (int i = 0; i < 30; ++i) {
    now += rtt;
    delivered += kMss;
    a.now = now;
    a.bytes_acked = kMss;
    a.delivered_total = delivered;
    a.rtt = rtt;
    RateSample rs;
    rs.prior_delivered = delivered - kMss;  // every ACK a new round
    rs.delivery_rate = static_cast<uint64_t>(kMss / to_seconds(rtt));
    rs.is_app_limited = true;
    a.rate = rs;
    cc.on_delivery(a);
  }
  EXPECT_GT(cc.round_count(), 30u);
  EXPECT_NEAR(cc.bandwidth(), bw, 1.0) << "an idle application says nothing about the path";
}

TEST_F(BbrTest, MssChangeBeforeDataResetsTheInitialWindow) {
  cc.set_mss(1460);
  EXPECT_EQ(cc.cwnd(), 10u * 1460);
  EXPECT_EQ(cc.ssthresh(), std::numeric_limits<uint32_t>::max());
}

}  // namespace
}  // namespace tinytcp::tcp

// TcpSender's delivery-rate samples (draft-cheng-iccrg-delivery-rate-
// estimation) and pacing at CongestionControl::pacing_rate(), driven through
// an algorithm that records what it is told and paces at a rate the test sets.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sender_harness.hh"

namespace tinytcp::tcp::testing {
namespace {

class RecordingCc : public CongestionControl {
 public:
  explicit RecordingCc(uint64_t window) : window_(window) {}

  std::string_view name() const override { return "recording"; }
  bool wants_rate_samples() const override { return true; }
  void set_mss(uint32_t smss) override { (void)smss; }
  void on_delivery(const AckEvent& ack) override { deliveries.push_back(ack); }
  void on_ack(const AckEvent& ack) override { (void)ack; }
  void on_congestion_event(const LossEvent& loss) override {
    (void)loss;
    ++congestion_events;
  }
  PartialAckResponse on_partial_ack(const AckEvent& ack) override {
    (void)ack;
    return PartialAckResponse::RetransmitNextUnacked;
  }
  void on_recovery_exit(const AckEvent& ack) override { (void)ack; }
  void on_rto(const LossEvent& loss) override { (void)loss; }
  uint64_t cwnd() const override { return window_; }
  uint64_t ssthresh() const override { return window_; }
  std::optional<uint64_t> pacing_rate() const override { return rate; }

  std::optional<uint64_t> rate;  // bytes per second
  std::vector<AckEvent> deliveries;
  int congestion_events = 0;

 private:
  uint64_t window_;
};

class SenderPacingTest : public SenderHarness {
 protected:
  // Establishes with a window far beyond cwnd (shift 7: 8 MB) and installs
  // the recording algorithm with a window of `segments` of 1000 bytes.
  void start(uint64_t segments, std::optional<uint64_t> rate, bool sack = false) {
    PeerOptions peer = default_peer();
    peer.send_window_shift = 7;
    peer.sack = sack;
    establish(peer);
    auto recording = std::make_unique<RecordingCc>(segments * 1000);
    cc = recording.get();
    cc->rate = rate;
    sender->set_congestion_control(std::move(recording));
    ack(1);  // the scaled window
    cc->deliveries.clear();
  }
  const RateSample& last_sample() {
    EXPECT_FALSE(cc->deliveries.empty());
    EXPECT_TRUE(cc->deliveries.back().rate.has_value());
    return *cc->deliveries.back().rate;
  }

  RecordingCc* cc = nullptr;
};

// --- Pacing ------------------------------------------------------------------

TEST_F(SenderPacingTest, SpacesSegmentsAtTheRate) {
  // 1 MB/s, 1000-byte segments: one per millisecond, released two at a time
  // (the burst is max(2 segments, 1 ms at the rate)).
  start(100, 1'000'000);
  push_bytes(40'000);
  EXPECT_EQ(drain(), 2u);
  const Instant start_time = now;
  size_t total = 2;
  for (int ms = 1; ms <= 30; ++ms) {
    tick(1ms);
    total += drain();
    // Never ahead of the rate by more than one burst.
    EXPECT_LE(total, 2u + static_cast<size_t>(ms)) << ms << " ms";
    EXPECT_GE(total, static_cast<size_t>(ms)) << ms << " ms";
  }
  EXPECT_EQ(now - start_time, 30ms);
  EXPECT_EQ(total, 32u);
}

TEST_F(SenderPacingTest, NextDeadlineIsThePacingRelease) {
  start(100, 1'000'000);
  push_bytes(10'000);
  EXPECT_EQ(drain(), 2u);
  ASSERT_TRUE(sender->next_deadline());
  EXPECT_EQ(*sender->next_deadline(), now + 2ms) << "the paced stream is 2 ms ahead";
  tick(2ms - 1ns);
  expect_nothing_sent();
  tick(1ns);
  EXPECT_EQ(drain(), 2u);
  EXPECT_EQ(*sender->next_deadline(), now + 2ms);
}

TEST_F(SenderPacingTest, BurstsAreBoundedByAMillisecondAtHighRates) {
  // 100 MB/s: 1 ms is 100 segments; the window (1000) is not the limit.
  start(1000, 100'000'000);
  push_bytes(350'000);
  EXPECT_EQ(drain(), 100u);
  EXPECT_EQ(*sender->next_deadline(), now + 1ms);
  tick(1ms);
  EXPECT_EQ(drain(), 100u);
  tick(1ms);
  EXPECT_EQ(drain(), 100u);
  tick(1ms);
  EXPECT_EQ(drain(), 50u);
}

TEST_F(SenderPacingTest, AnAckDoesNotReleaseEarly) {
  start(100, 1'000'000);
  push_bytes(20'000);
  EXPECT_EQ(drain(), 2u);
  now += 500us;
  ack(1001);  // room in the window, but not yet in the paced stream
  expect_nothing_sent();
  now += 1500us;
  ack(2001);
  EXPECT_EQ(drain(), 2u);
}

TEST_F(SenderPacingTest, RetransmissionsAreNotHeldBack) {
  // 1000 bytes per second: the first release (two segments) puts the paced
  // stream 2 s ahead; the RTO fires after 1 s and retransmits anyway.
  start(100, 1000);
  push_bytes(20'000);
  EXPECT_EQ(drain(), 2u);
  EXPECT_EQ(*sender->next_deadline(), now + rto());
  tick(rto());
  expect_segment().seqno(1).payload_size(1000);
  expect_nothing_sent();
}

TEST_F(SenderPacingTest, WithoutARateTheWindowGoesAtOnce) {
  start(10, std::nullopt);
  push_bytes(20'000);
  EXPECT_EQ(drain(), 10u);
  ASSERT_TRUE(sender->next_deadline());
  EXPECT_EQ(*sender->next_deadline(), now + rto()) << "only the RTO";
}

// --- Delivery-rate samples ---------------------------------------------------

TEST_F(SenderPacingTest, SampleCoversTheFlight) {
  start(10, std::nullopt);
  push_bytes(10'000);
  EXPECT_EQ(drain(), 10u);
  now += 100ms;
  ack(10'001);
  ASSERT_EQ(cc->deliveries.size(), 1u);
  const AckEvent& event = cc->deliveries.back();
  EXPECT_EQ(event.bytes_acked, 10'000u);
  EXPECT_EQ(event.delivered_total, 10'001u);
  const RateSample& rs = last_sample();
  EXPECT_EQ(rs.delivered, 10'000u);
  EXPECT_EQ(rs.prior_delivered, 1u) << "the SYN was delivered before";
  EXPECT_EQ(rs.interval, 100ms);
  ASSERT_TRUE(rs.delivery_rate);
  EXPECT_EQ(*rs.delivery_rate, 100'000u);  // 10 000 bytes in 100 ms
  ASSERT_TRUE(rs.rtt);
  EXPECT_EQ(*rs.rtt, 100ms);
}

TEST_F(SenderPacingTest, SampleUsesTheSlowerOfSendingAndAcking) {
  start(10, std::nullopt);
  push_bytes(1000);  // A at 0 ms
  now += 10ms;
  push_bytes(1000);  // B at 10 ms
  EXPECT_EQ(drain(), 2u);
  now += 40ms;
  ack(1001);  // A delivered at 50 ms
  const RateSample& first = last_sample();
  EXPECT_EQ(first.send_elapsed, 0ms);
  EXPECT_EQ(first.ack_elapsed, 50ms);
  EXPECT_EQ(first.interval, 50ms);
  push_bytes(1000);  // C at 50 ms
  now += 40ms;
  push_bytes(1000);  // D at 90 ms
  EXPECT_EQ(drain(), 2u);
  now += 10ms;
  ack(4001);  // B, C and D in one compressed ACK at 100 ms
  // D's flight was sent over 90 ms (since A) but acknowledged in 50 ms
  // (since A's delivery): the network cannot have delivered faster than we
  // sent, so the sending time counts.
  const RateSample& rs = last_sample();
  EXPECT_EQ(rs.send_elapsed, 90ms);
  EXPECT_EQ(rs.ack_elapsed, 50ms);
  EXPECT_EQ(rs.interval, 90ms);
  EXPECT_EQ(rs.delivered, 3000u);
  ASSERT_TRUE(rs.delivery_rate);
  EXPECT_EQ(*rs.delivery_rate, 33'333u);
}

TEST_F(SenderPacingTest, SamplesFromAnIdleApplicationAreAppLimited) {
  start(20, std::nullopt);
  push_bytes(5000);  // a quarter of the window, then nothing
  EXPECT_EQ(drain(), 5u);
  now += 50ms;
  ack(5001);
  EXPECT_TRUE(last_sample().is_app_limited);
  // The application writes plenty: the flight sent before the app-limited
  // stretch is delivered (draft-cheng §3.4) still carries the mark...
  push_bytes(100'000);
  EXPECT_EQ(drain(), 20u);
  now += 50ms;
  ack(25'001);
  EXPECT_TRUE(last_sample().is_app_limited);
  // ...the next one is the network's.
  EXPECT_EQ(drain(), 20u);
  now += 50ms;
  ack(45'001);
  EXPECT_FALSE(last_sample().is_app_limited);
  EXPECT_EQ(drain(), 20u);
}

TEST_F(SenderPacingTest, SackedSegmentsAreDeliveredAndLossesReported) {
  start(10, std::nullopt, /*sack=*/true);
  push_bytes(10'000);
  EXPECT_EQ(drain(), 10u);
  now += 40ms;
  // The first segment is lost; the peer SACKs the next three.
  ack(1, 65535, {{1001, 4001}});
  ASSERT_EQ(cc->deliveries.size(), 1u);
  EXPECT_EQ(cc->deliveries.back().bytes_sacked, 3000u);
  const RateSample& rs = last_sample();
  EXPECT_EQ(rs.delivered, 3000u);
  EXPECT_EQ(rs.newly_lost, 1000u) << "RFC 6675 IsLost: three segments sacked above it";
  ASSERT_TRUE(rs.rtt);
  EXPECT_EQ(*rs.rtt, 40ms);
  EXPECT_EQ(cc->congestion_events, 1);
  expect_segment().seqno(1);  // the fast retransmission
  drain();
  // The cumulative ACK over sacked data delivers only the repaired hole,
  // and a retransmission gives no RTT (Karn).
  now += 40ms;
  ack(4001);
  // RFC 8985 §6.2: 4001..10000, sent 40 ms before the retransmission that
  // was just delivered and still not sacked 80 ms on, are lost.
  for (uint64_t seq = 4001; seq < 10001; seq += 1000) {
    expect_segment().seqno(seq).payload_size(1000);
  }
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().rack_marked_lost, 6u);
  EXPECT_EQ(cc->deliveries.back().delivered_total, 4001u);
  EXPECT_EQ(last_sample().delivered, 1000u);
  EXPECT_FALSE(last_sample().rtt);
}

}  // namespace
}  // namespace tinytcp::tcp::testing

// TcpSender with RACK-TLP (RFC 8985): loss by time, tail loss probes, the
// recovery probe. Split from tcp_sender_test.cc.

#include <gtest/gtest.h>

#include "tcp/tail_loss_probe.hh"
#include "tcp/tcp_sender.hh"
#include "unit/tcp/sender_harness.hh"

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;
using testing::SenderHarness;
using testing::SentSegment;

class TcpSenderTest : public SenderHarness {};

// --- RACK-TLP (RFC 8985) ------------------------------------------------------

// SACK negotiated, RACK on (the default). After warm_up() SRTT = min RTT =
// 20 ms, RTO = 200 ms, SND.UNA = 1001; segments of 1000 bytes follow.
class RackTlpTest : public TcpSenderTest {
 protected:
  static constexpr Duration kRtt = 20ms;

  RackTlpTest() { config.nagle = false; }

  void start(bool sack = true) {
    auto peer = default_peer();
    peer.sack = sack;
    // establish() with the SYN-ACK one RTT after the SYN.
    make();
    sender->push(now, sink());
    expect_segment().syn().seqno(0);
    sender->set_peer_options(peer);
    now += kRtt;
    ASSERT_EQ(syn_ack(), AckResult::Advanced);
    push_bytes(1000);
    expect_segment().seqno(1);
    now += kRtt;
    ack(1001);
    expect_nothing_sent();
    ASSERT_EQ(sender->state().srtt, kRtt);
    ASSERT_EQ(rto(), 200ms);
  }
  void expect_stats(uint64_t marked, uint64_t lost_rexmits, uint64_t probes,
                    uint64_t tlp_recoveries) {
    const SenderStats& s = sender->stats();
    EXPECT_EQ(s.rack_marked_lost, marked) << "rack_marked_lost";
    EXPECT_EQ(s.lost_retransmissions_detected, lost_rexmits) << "lost_retransmissions_detected";
    EXPECT_EQ(s.tlp_probes, probes) << "tlp_probes";
    EXPECT_EQ(s.tlp_recoveries, tlp_recoveries) << "tlp_recoveries";
  }
};

TEST_F(RackTlpTest, MarksLostWhenTheReorderingWindowPasses) {
  start();
  push_bytes(4000);  // 1001, 2001, 3001, 4001, all sent now
  ASSERT_EQ(drain(), 4u);
  const Instant sent_at = now;
  now += kRtt;
  ack(1001, 65535, {{4001, 5001}});  // the last arrived: RACK.rtt = 20 ms
  expect_nothing_sent();
  // reo_wnd = min RTT / 4: the others are lost at sent + 20 + 5 ms.
  EXPECT_EQ(sender->next_deadline(), sent_at + kRtt + 5ms);
  EXPECT_FALSE(sender->in_recovery());
  tick(5ms - 1ns);
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().rack_marked_lost, 0u);
  tick(1ns);
  ASSERT_TRUE(sender->in_recovery());
  // FlightSize 4000: cwnd = ssthresh = 2000; pipe 0 once three are lost.
  expect_segment().seqno(1001).payload_size(1000);
  expect_segment().seqno(2001).payload_size(1000);
  expect_nothing_sent();
  EXPECT_EQ(sender->state().cwnd, 2000u);
  EXPECT_EQ(sender->stats().fast_retransmits, 1u);
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
  expect_stats(3, 0, 0, 0);
}

TEST_F(RackTlpTest, LostRetransmissionIsRetransmittedAgainWithoutRto) {
  start();
  push_bytes(4000);
  ASSERT_EQ(drain(), 4u);
  now += kRtt;
  ack(1001, 65535, {{4001, 5001}});
  tick(5ms);
  expect_segment().seqno(1001);  // retransmitted at T
  expect_segment().seqno(2001);
  expect_nothing_sent();
  // One RTT later 2001's retransmission is SACKed, 1001's is not: it was
  // sent no later, so it is lost as well (reo_wnd 0 in recovery).
  now += kRtt;
  ack(1001, 65535, {{2001, 3001}, {4001, 5001}});
  EXPECT_EQ(sender->stats().lost_retransmissions_detected, 1u);
  expect_segment().seqno(1001).payload_size(1000);  // again
  expect_segment().seqno(3001).payload_size(1000);
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
  EXPECT_EQ(sender->stats().fast_retransmits, 1u);  // one reduction per episode
  EXPECT_EQ(sender->state().cwnd, 2000u);
  expect_stats(4, 1, 0, 0);
  now += kRtt;
  ack(5001);
  EXPECT_FALSE(sender->in_recovery());
  EXPECT_EQ(sender->stats().retransmitted_segments, 4u);
}

TEST_F(RackTlpTest, ReorderingWithinTheWindowIsNotALoss) {
  start();
  push_bytes(4000);
  ASSERT_EQ(drain(), 4u);
  now += kRtt;
  ack(1001, 65535, {{4001, 5001}});
  tick(3ms);  // the others arrive late, within reo_wnd
  ack(5001);
  tick(50ms);
  expect_nothing_sent();
  EXPECT_FALSE(sender->in_recovery());
  EXPECT_EQ(sender->stats().retransmitted_segments, 0u);
  expect_stats(0, 0, 0, 0);
}

TEST_F(RackTlpTest, RackIsOffWithoutSack) {
  start(false);
  push_bytes(4000);
  ASSERT_EQ(drain(), 4u);
  EXPECT_EQ(sender->next_deadline(), now + rto());  // no probe timeout
  now += kRtt;
  ack(1001);
  tick(50ms);
  expect_nothing_sent();
  expect_stats(0, 0, 0, 0);
}

TEST_F(RackTlpTest, RackCanBeSwitchedOff) {
  config.rack = false;
  start();
  push_bytes(4000);
  ASSERT_EQ(drain(), 4u);
  EXPECT_EQ(sender->next_deadline(), now + rto());
  now += kRtt;
  ack(1001, 65535, {{4001, 5001}});
  tick(50ms);
  expect_nothing_sent();  // RFC 6675 waits for DupThresh
  expect_stats(0, 0, 0, 0);
}

TEST_F(RackTlpTest, TailLossProbeFiresAtTwoSrttAndItsSackStartsRecovery) {
  start();
  push_bytes(4000);
  ASSERT_EQ(drain(), 4u);
  now += kRtt;
  ack(3001);  // 3001 and 4001 lost at the tail: no SACK can come
  EXPECT_EQ(sender->next_deadline(), now + 2 * kRtt);  // PTO, before RTO
  tick(2 * kRtt - 1ns);
  expect_nothing_sent();
  tick(1ns);
  expect_segment().seqno(4001).payload_size(1000);  // the last segment again
  expect_nothing_sent();
  EXPECT_TRUE(sender->state().tlp_outstanding);
  EXPECT_EQ(sender->next_deadline(), now + rto());  // then the RTO, not another probe
  now += kRtt;
  ack(3001, 65535, {{4001, 5001}});  // the probe's SACK: 3001 is lost
  ASSERT_TRUE(sender->in_recovery());
  expect_segment().seqno(3001).payload_size(1000);
  expect_nothing_sent();
  EXPECT_FALSE(sender->state().tlp_outstanding);
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
  expect_stats(1, 0, 1, 0);
}

TEST_F(RackTlpTest, ProbeTimeoutHasAFloorWhenTheRttIsTiny) {
  // A 10 us round trip (a TUN device, loopback): 2 SRTT is 20 us, less than
  // the peer needs to answer; the probe waits TailLossProbe::kMinTimeout.
  constexpr Duration kTinyRtt = 10us;
  auto peer = default_peer();
  peer.sack = true;
  make();
  sender->push(now, sink());
  expect_segment().syn().seqno(0);
  sender->set_peer_options(peer);
  now += kTinyRtt;
  ASSERT_EQ(syn_ack(), AckResult::Advanced);
  push_bytes(1000);
  expect_segment().seqno(1);
  now += kTinyRtt;
  ack(1001);
  ASSERT_EQ(sender->state().srtt, kTinyRtt);
  push_bytes(3000);
  ASSERT_EQ(drain(), 3u);
  now += kTinyRtt;
  ack(2001);  // 2001 and 3001 lost at the tail
  EXPECT_EQ(sender->next_deadline(), now + TailLossProbe::kMinTimeout);
  tick(TailLossProbe::kMinTimeout - 1ns);
  expect_nothing_sent();
  tick(1ns);
  expect_segment().seqno(3001).payload_size(1000);
  expect_nothing_sent();
}

TEST_F(RackTlpTest, TailLossProbeSendsNewDataWhenThereIsSome) {
  start();
  // cwnd is 10 segments: 12 written, 2 wait for the window to open.
  push_bytes(12000);
  ASSERT_EQ(drain(), 10u);
  tick(2 * kRtt);
  expect_segment().seqno(11001).payload_size(1000);  // new data, cwnd ignored
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().retransmitted_segments, 0u);
  expect_stats(0, 0, 1, 0);
  now += kRtt;
  ack(12001);                     // everything arrived: no loss
  expect_segment().seqno(12001);  // the rest of what was written
  expect_nothing_sent();
  EXPECT_FALSE(sender->state().tlp_outstanding);
  EXPECT_EQ(sender->stats().tlp_recoveries, 0u);
}

TEST_F(RackTlpTest, ProbeTimeoutAllowsForDelayedAckOfASingleSegment) {
  start();
  push_bytes(1000);
  expect_segment().seqno(1001);
  // 2 SRTT + 200 ms is past the RTO: the probe goes at the RTO's time.
  EXPECT_EQ(sender->next_deadline(), now + rto());
  tick(rto());
  expect_segment().seqno(1001);
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
  expect_stats(0, 0, 1, 0);
}

TEST_F(RackTlpTest, ProbeThatRepairedATailLossReducesTheWindowOnce) {
  start();
  push_bytes(2000);
  ASSERT_EQ(drain(), 2u);
  now += kRtt;
  ack(2001);  // 2001 lost
  const uint64_t cwnd = sender->state().cwnd;
  tick(rto());
  expect_segment().seqno(2001);  // the probe
  now += kRtt;
  ack(3001);  // only the probe arrived (an ACK of the original would be a duplicate)
  EXPECT_TRUE(sender->state().tlp_outstanding);
  push_bytes(1000);
  expect_segment().seqno(3001);
  now += kRtt;
  ack(4001);  // beyond the probe: the original was lost
  EXPECT_FALSE(sender->state().tlp_outstanding);
  EXPECT_EQ(sender->stats().tlp_recoveries, 1u);
  EXPECT_LT(sender->state().cwnd, cwnd);
  EXPECT_EQ(sender->state().cwnd, 2000u);  // ssthresh = max(FlightSize / 2, 2 SMSS)
  EXPECT_FALSE(sender->in_recovery());
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
  expect_stats(0, 0, 1, 1);
}

TEST_F(RackTlpTest, DuplicateAckForTheProbeMeansNoLoss) {
  start();
  push_bytes(2000);
  ASSERT_EQ(drain(), 2u);
  now += kRtt;
  ack(2001);
  tick(rto());
  expect_segment().seqno(2001);
  now += kRtt;
  ack(3001);  // the original
  ack(3001);  // the probe: a duplicate ACK
  EXPECT_FALSE(sender->state().tlp_outstanding);
  push_bytes(1000);
  expect_segment().seqno(3001);
  now += kRtt;
  ack(4001);
  EXPECT_EQ(sender->stats().tlp_recoveries, 0u);
  expect_stats(0, 0, 1, 0);
}

TEST_F(RackTlpTest, NoProbeTimeoutInRecovery) {
  start();
  push_bytes(5000);
  ASSERT_EQ(drain(), 5u);
  now += kRtt;
  ack(1001, 65535, {{2001, 5001}});  // three sacked: DupThresh, recovery at once
  ASSERT_TRUE(sender->in_recovery());
  expect_segment().seqno(1001);
  expect_nothing_sent();
  ASSERT_TRUE(sender->next_deadline());
  EXPECT_GT(*sender->next_deadline(), now + 2 * kRtt);  // the RTO only
  tick(2 * kRtt);
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().tlp_probes, 0u);
  EXPECT_FALSE(sender->state().tlp_outstanding);
}

TEST_F(RackTlpTest, RecoveryProbeResendsTheHoleWhenNothingElseWould) {
  config.recovery_probes = true;
  start();
  push_bytes(5000);  // 1001 .. 5001, sent at T
  ASSERT_EQ(drain(), 5u);
  const Instant sent_at = now;
  now += kRtt;
  ack(1001, 65535, {{2001, 6001}});  // four sacked: recovery
  ASSERT_TRUE(sender->in_recovery());
  expect_segment().seqno(1001);
  expect_nothing_sent();
  // The retransmission is lost and nothing sent after it can tell RACK so:
  // 2 SRTT later the hole goes again, then after 4 SRTT; the RTO (T + 200 ms)
  // would be next.
  EXPECT_EQ(sender->next_deadline(), now + 2 * kRtt);
  tick(2 * kRtt - 1ns);
  expect_nothing_sent();
  tick(1ns);
  expect_segment().seqno(1001).payload_size(1000);
  expect_nothing_sent();
  EXPECT_EQ(sender->next_deadline(), now + 4 * kRtt);
  tick(4 * kRtt);
  expect_segment().seqno(1001);
  EXPECT_EQ(sender->stats().recovery_probes, 2u);
  // 8 SRTT more would pass the RTO: that one is left to the RTO.
  EXPECT_EQ(sender->next_deadline(), sent_at + 200ms);
  now += kRtt;
  ack(6001);
  EXPECT_FALSE(sender->in_recovery());
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
  EXPECT_EQ(sender->stats().recovery_probes, 2u);
  EXPECT_EQ(sender->stats().tlp_probes, 0u);
}

TEST_F(RackTlpTest, RecoveryProbeWaitsForTheLatestRoundTripNotAnInflatedSrtt) {
  // SRTT starts from a 200 ms handshake (say, a SYN-ACK the peer had to
  // send again) and moves slowly; the path's round trip is 20 ms, which
  // RACK.rtt shows from the first SACK. The probe waits 2 x 20 ms.
  config.recovery_probes = true;
  auto peer = default_peer();
  peer.sack = true;
  make();
  sender->push(now, sink());
  expect_segment().syn().seqno(0);
  sender->set_peer_options(peer);
  now += 200ms;
  ASSERT_EQ(syn_ack(), AckResult::Advanced);
  push_bytes(1000);
  expect_segment().seqno(1);
  now += kRtt;
  ack(1001);
  ASSERT_GT(sender->state().srtt, 5 * kRtt);
  push_bytes(5000);
  ASSERT_EQ(drain(), 5u);
  now += kRtt;
  ack(1001, 65535, {{2001, 6001}});
  ASSERT_TRUE(sender->in_recovery());
  expect_segment().seqno(1001);
  expect_nothing_sent();
  EXPECT_EQ(sender->next_deadline(), now + 2 * kRtt);
  tick(2 * kRtt);
  expect_segment().seqno(1001);
  EXPECT_EQ(sender->stats().recovery_probes, 1u);
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
}

TEST_F(RackTlpTest, ProgressRestartsTheRecoveryProbeClock) {
  config.recovery_probes = true;
  start();
  push_bytes(5000);
  ASSERT_EQ(drain(), 5u);
  now += kRtt;
  ack(1001, 65535, {{3001, 6001}});  // 1001 and 2001 lost
  expect_segment().seqno(1001);
  expect_segment().seqno(2001);
  expect_nothing_sent();
  tick(2 * kRtt);
  expect_segment().seqno(1001);  // the first probe
  expect_nothing_sent();
  // The probe arrived; 2001's retransmission, sent before it, did not: RACK
  // learns that from the probe's ACK and resends 2001 at once. The ACK made
  // progress, so the next probe is 2 SRTT away again, not 4.
  now += kRtt;
  ack(2001, 65535, {{3001, 6001}});
  expect_segment().seqno(2001);
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().lost_retransmissions_detected, 1u);
  EXPECT_EQ(sender->next_deadline(), now + 2 * kRtt);
  tick(2 * kRtt);
  expect_segment().seqno(2001);
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().recovery_probes, 2u);
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
}

TEST_F(RackTlpTest, RtoStaysTheLastResort) {
  start();
  push_bytes(2000);
  ASSERT_EQ(drain(), 2u);
  tick(2 * kRtt);
  expect_segment().seqno(2001);  // the probe
  tick(rto() - 1ns);
  expect_nothing_sent();
  tick(1ns);
  expect_segment().seqno(1001);  // nothing answered: RTO
  EXPECT_EQ(sender->stats().rto_expirations, 1u);
  EXPECT_FALSE(sender->state().tlp_outstanding);
  expect_stats(0, 0, 1, 0);
}

}  // namespace
}  // namespace tinytcp::tcp

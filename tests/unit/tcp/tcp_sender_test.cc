#include "tcp/tcp_sender.hh"

#include <gtest/gtest.h>

#include <limits>

#include "tcp/tail_loss_probe.hh"
#include "unit/tcp/sender_harness.hh"
#include "util/random.hh"

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;
using testing::SenderHarness;
using testing::SentSegment;

class TcpSenderTest : public SenderHarness {};

// --- Handshake -------------------------------------------------------------

TEST_F(TcpSenderTest, SendsSynWithOfferedOptionsFirst) {
  make();
  sender->outbound().push("hello");
  sender->push(now, sink());
  auto syn = expect_segment().syn().seqno(0).payload("");
  EXPECT_EQ(syn.segment().options.mss, std::optional<uint16_t>(1460));
  EXPECT_TRUE(syn.segment().options.sack_permitted);
  EXPECT_TRUE(syn.segment().options.timestamps.has_value());
  EXPECT_TRUE(sender->syn_sent());
  EXPECT_FALSE(sender->syn_acked());
  EXPECT_EQ(sender->sequence_numbers_in_flight(), 1u);
  sender->push(now, sink());
  expect_nothing_sent();  // no data before the SYN is acknowledged
}

TEST_F(TcpSenderTest, RetransmitsSynWithBackoff) {
  make();
  sender->push(now, sink());
  expect_segment().syn();
  tick(1s - 1ms);
  expect_nothing_sent();
  tick(1ms);
  expect_segment().syn().seqno(0);
  EXPECT_EQ(sender->consecutive_retransmissions(), 1u);
  tick(2s - 1ms);  // RFC 6298 §5.5: doubled
  expect_nothing_sent();
  tick(1ms);
  expect_segment().syn().seqno(0);
  EXPECT_EQ(sender->consecutive_retransmissions(), 2u);
  EXPECT_EQ(sender->stats().rto_expirations, 2u);
  EXPECT_EQ(sender->next_deadline(), now + 4s);
}

TEST_F(TcpSenderTest, RtoIsAtLeastThreeSecondsAfterSynTimeout) {
  make();
  sender->push(now, sink());
  tick(1s);
  expect_segment().syn();
  expect_segment().syn();
  sender->set_peer_options(default_peer());
  EXPECT_EQ(ack(1), AckResult::Advanced);  // ambiguous: Karn, no sample
  EXPECT_EQ(rto(), 3s);                    // RFC 6298 §5.7
  EXPECT_EQ(sender->state().cwnd, 1000u);  // RFC 5681 §3.1: one segment
  EXPECT_EQ(sender->state().ssthresh, std::numeric_limits<uint32_t>::max());
}

// --- Segmentation and windows ------------------------------------------------

TEST_F(TcpSenderTest, SegmentsToPeerMss) {
  config.nagle = false;
  establish();
  push_bytes(2500);
  expect_segment().seqno(1).payload_size(1000);
  expect_segment().seqno(1001).payload_size(1000);
  expect_segment().seqno(2001).payload_size(500);
  expect_nothing_sent();
  EXPECT_EQ(sender->max_payload(), 1000u);
}

TEST_F(TcpSenderTest, TimestampsReducePayloadAndStampEverySegment) {
  auto peer = default_peer();
  peer.timestamps = true;
  establish(peer);
  EXPECT_EQ(sender->max_payload(), 988u);  // RFC 7323: 12 option bytes
  push_bytes(988);
  auto seg = expect_segment().payload_size(988);
  ASSERT_TRUE(seg.segment().options.timestamps.has_value());
  EXPECT_EQ(seg.segment().options.timestamps->value, sender->timestamp_value(now));
}

TEST_F(TcpSenderTest, PayloadBytesMatchTheStream) {
  config.nagle = false;
  establish();
  push("hello world, this is tinytcp");
  expect_segment().seqno(1).payload("hello world, this is tinytcp");
}

TEST_F(TcpSenderTest, FillsThePeerWindowOnly) {
  establish(default_peer(), 2500);
  push_bytes(5000);
  expect_segment().seqno(1).payload_size(1000);
  expect_segment().seqno(1001).payload_size(1000);
  // 500 bytes of window left with 1000 outstanding: sender SWS avoidance waits
  // (RFC 9293 §3.8.6.2.1), since 500 < max window / 2.
  expect_nothing_sent();
  ack(1001, 2500);
  expect_segment().seqno(2001).payload_size(1000);
  expect_nothing_sent();
  ack(3001, 2500);
  expect_segment().seqno(3001).payload_size(1000);
  expect_segment().seqno(4001).payload_size(1000);
  EXPECT_EQ(sender->sequence_numbers_in_flight(), 2000u);
}

TEST_F(TcpSenderTest, InitialWindowIsTenSegments) {
  auto peer = default_peer();
  peer.send_window_shift = 4;  // 1 MiB window
  establish(peer);
  push_bytes(20000);
  EXPECT_EQ(drain(), 10u);  // RFC 6928
  EXPECT_EQ(sender->state().cwnd, 10000u);
  EXPECT_EQ(sender->bytes_in_flight(), 10000u);
}

TEST_F(TcpSenderTest, InitialWindowIsConfigurable) {
  config.initial_window_segments = 3;
  auto peer = default_peer();
  peer.send_window_shift = 4;
  establish(peer);
  push_bytes(20000);
  EXPECT_EQ(drain(), 3u);
}

TEST_F(TcpSenderTest, SlowStartGrowsOneSegmentPerAck) {
  auto peer = default_peer();
  peer.send_window_shift = 4;
  establish(peer);
  push_bytes(50000);
  EXPECT_EQ(drain(), 10u);
  ack(1001, 4096);
  EXPECT_EQ(sender->state().cwnd, 11000u);
  EXPECT_EQ(drain(), 2u);  // one for the acked segment, one for the growth
}

TEST_F(TcpSenderTest, ScalesThePeerWindow) {
  auto peer = default_peer();
  peer.send_window_shift = 2;
  establish(peer, 1000);  // the SYN-ACK's window is never scaled
  push_bytes(3000);
  EXPECT_EQ(drain(), 1u);
  ack(1001, 1000);  // 4000 bytes now
  EXPECT_EQ(drain(), 2u);
}

// --- Nagle ----------------------------------------------------------------

TEST_F(TcpSenderTest, NagleHoldsSmallSegmentWhileDataIsUnacknowledged) {
  establish();
  push("a");
  expect_segment().seqno(1).payload("a");  // nothing outstanding: goes now
  push("b");
  push("c");
  expect_nothing_sent();
  ack(2);
  expect_segment().seqno(2).payload("bc");
}

TEST_F(TcpSenderTest, NoDelaySendsSmallSegmentsAtOnce) {
  config.nagle = false;
  establish();
  push("a");
  push("b");
  expect_segment().seqno(1).payload("a");
  expect_segment().seqno(2).payload("b");
}

TEST_F(TcpSenderTest, NagleCanBeSwitchedOffAtRunTime) {
  establish();
  push("a");
  push("b");
  expect_segment().payload("a");
  expect_nothing_sent();
  sender->set_nagle(false);
  push("c");
  expect_segment().seqno(2).payload("bc");
}

TEST_F(TcpSenderTest, NagleSendsFullSegments) {
  establish();
  push("a");
  expect_segment().payload("a");
  push_bytes(1500);
  expect_segment().seqno(2).payload_size(1000);
  expect_nothing_sent();  // the 500-byte tail waits
}

// --- FIN ------------------------------------------------------------------

TEST_F(TcpSenderTest, FinRidesOnTheLastDataSegment) {
  establish();
  push("hello");
  expect_segment().seqno(1).payload("hello").fin(false);
  push(" world");
  close();  // closing pushes the small tail despite Nagle
  expect_segment().seqno(6).payload(" world").fin();
  EXPECT_TRUE(sender->fin_sent());
  EXPECT_FALSE(sender->fin_acked());
  ack(13);
  EXPECT_TRUE(sender->fin_acked());
  EXPECT_FALSE(sender->next_deadline().has_value());
}

TEST_F(TcpSenderTest, FinAloneTakesOneSequenceNumber) {
  establish();
  close();
  expect_segment().seqno(1).payload("").fin();
  EXPECT_EQ(sender->sequence_numbers_in_flight(), 1u);
  tick(rto());
  expect_segment().seqno(1).fin();  // retransmitted like data
  ack(2);
  EXPECT_TRUE(sender->fin_acked());
  EXPECT_EQ(sender->outbound().bytes_buffered(), 0u);
}

TEST_F(TcpSenderTest, FinWaitsForWindowSpace) {
  establish(default_peer(), 5);
  push("hello");
  close();
  expect_segment().payload("hello").fin(false);
  ack(6, 1);
  expect_segment().seqno(6).fin();
}

// --- Retransmission timer ----------------------------------------------------

TEST_F(TcpSenderTest, RetransmitsOnTimeoutAndBacksOff) {
  establish();
  const Duration first = rto();
  push("hello");
  expect_segment().seqno(1).payload("hello");
  tick(first - 1ms);
  expect_nothing_sent();
  tick(1ms);
  expect_segment().seqno(1).payload("hello");
  EXPECT_EQ(rto(), 2 * first);
  tick(2 * first - 1ms);
  expect_nothing_sent();
  tick(1ms);
  expect_segment().seqno(1).payload("hello");
  EXPECT_EQ(sender->stats().retransmitted_segments, 2u);
  EXPECT_EQ(sender->stats().retransmitted_bytes, 10u);
  ack(6);
  EXPECT_EQ(sender->consecutive_retransmissions(), 0u);
  EXPECT_FALSE(sender->next_deadline().has_value());
}

TEST_F(TcpSenderTest, KarnsRuleTakesNoSampleFromRetransmittedSegments) {
  establish();
  now += 100ms;
  push("a");
  expect_segment();
  now += 50ms;
  ack(2);  // a clean 50 ms sample
  const Duration srtt = sender->state().srtt;
  push("b");
  expect_segment();
  const Duration before = rto();
  tick(before);
  expect_segment().payload("b");
  now += 5ms;
  ack(3);  // ambiguous
  EXPECT_EQ(sender->state().srtt, srtt);
  EXPECT_EQ(rto(), 2 * before) << "the backed-off RTO is kept until a new sample (§5.7)";
}

TEST_F(TcpSenderTest, TimestampsGiveSamplesEvenForRetransmissions) {
  auto peer = default_peer();
  peer.timestamps = true;
  establish(peer);
  const Duration srtt_before = sender->state().srtt;
  push("a");
  expect_segment();
  tick(rto());
  auto retx = expect_segment();
  const uint32_t tsval = retx.segment().options.timestamps->value;
  now += 30ms;
  ack(2, 65535, {}, tsval);
  // RFC 7323 §4.3: the echo names the retransmission, so 30 ms is a sample:
  // RFC 6298 §2.3 SRTT <- 7/8 SRTT + 1/8 R (one segment in flight).
  EXPECT_EQ(sender->state().srtt, srtt_before + (Duration(30ms) - srtt_before) / 8);
  EXPECT_EQ(rto(), 200ms);  // a sample was taken: backoff cleared, floor 200 ms
}

TEST_F(TcpSenderTest, EchoOfAnEarlierCopyGivesNoSample) {
  // The peer got the original, its ACK was lost, and the ACK that finally
  // comes (after our timeout) still echoes the original's TSval: the time
  // since then is our timeout wait, not a round trip.
  auto peer = default_peer();
  peer.timestamps = true;
  establish(peer);
  now += 10ms;
  push("a");
  auto original = expect_segment();
  const uint32_t original_tsval = original.segment().options.timestamps->value;
  now += 10ms;
  ack(2, 65535, {}, original_tsval);  // a clean 10 ms sample
  const Duration srtt = sender->state().srtt;
  push("b");
  auto first = expect_segment();
  const uint32_t first_tsval = first.segment().options.timestamps->value;
  const Duration before = rto();
  tick(before);
  expect_segment().payload("b");
  now += 5ms;
  ack(3, 65535, {}, first_tsval);
  EXPECT_EQ(sender->state().srtt, srtt);
  EXPECT_EQ(sender->stats().ambiguous_rtt_samples, 1u);
  EXPECT_EQ(rto(), 2 * before) << "no sample: the backed-off RTO stays (RFC 6298 §5.7)";
}

TEST_F(TcpSenderTest, SubMillisecondTimestampSampleIsNotZero) {
  auto peer = default_peer();
  peer.timestamps = true;
  establish(peer);  // a 0 ms sample from the SYN, acknowledged at once
  ASSERT_EQ(sender->state().srtt, 0ms);
  push("a");
  expect_segment();
  tick(rto());
  const uint32_t tsval = expect_segment().segment().options.timestamps->value;
  now += 100us;
  ack(2, 65535, {}, tsval);  // echo of this very millisecond
  // The TSval clock ticks in ms: "0 ms" is "under 1 ms", counted as 1 ms.
  EXPECT_GT(sender->state().srtt, 0ms);
  EXPECT_LE(sender->state().srtt, 1ms);
}

TEST_F(TcpSenderTest, RtoHasAConfigurableFloor) {
  config.rto_min = 50ms;
  establish();  // a 0 ms sample from the SYN
  EXPECT_EQ(rto(), 50ms);
}

TEST_F(TcpSenderTest, RtoIsCappedAtTheMaximum) {
  config.rto_max = 5s;
  config.max_retransmissions = 100;
  establish();
  push("a");
  expect_segment().seqno(1).payload("a");
  for (int i = 0; i < 10; ++i) {
    tick(rto());
    expect_segment().seqno(1).payload("a");
    expect_nothing_sent();
  }
  EXPECT_EQ(rto(), 5s);
}

TEST_F(TcpSenderTest, LinearTimeoutsKeepTheRtoForTheFirstFew) {
  config.linear_timeouts = 2;
  establish();
  push("a");
  expect_segment();
  const Duration base = rto();
  tick(base);
  expect_segment().payload("a");
  EXPECT_EQ(rto(), base);
  tick(base);
  expect_segment().payload("a");
  EXPECT_EQ(rto(), base);
  tick(base);  // the third doubles, as RFC 6298 §5.5 does from the first
  expect_segment().payload("a");
  EXPECT_EQ(rto(), 2 * base);
  tick(2 * base);
  expect_segment().payload("a");
  EXPECT_EQ(rto(), 4 * base);
}

TEST_F(TcpSenderTest, RtoAfterSynTimeoutCanBeLeftAlone) {
  config.rto_after_syn_timeout = Duration::zero();
  make();
  sender->push(now, sink());
  tick(1s);
  expect_segment().syn();
  expect_segment().syn();
  sender->set_peer_options(default_peer());
  EXPECT_EQ(ack(1), AckResult::Advanced);  // ambiguous: no sample
  EXPECT_EQ(rto(), 2s) << "the backed-off RTO, not raised to 3 s";
}

// TcpConfig::syn_rto: the SYN retries after 20, 40, 80 ms... but never later
// than the RTO would have (here linear at 100 ms, as in the file-transfer
// profile).
TEST_F(TcpSenderTest, SynHasItsOwnDoublingTimerCappedByTheRto) {
  config.syn_rto = 20ms;
  config.rto_initial = 100ms;
  config.rto_min = 30ms;
  config.linear_timeouts = 20;
  make();
  sender->push(now, sink());
  expect_segment().syn();
  for (const Duration wait : {20ms, 40ms, 80ms, 100ms, 100ms}) {
    tick(wait - 1ms);
    expect_nothing_sent();
    tick(1ms);
    expect_segment().syn().seqno(0);
  }
  EXPECT_EQ(sender->consecutive_retransmissions(), 5u);
  EXPECT_EQ(rto(), 100ms) << "the RTT estimator is not touched by the SYN timer";
}

// Once the SYN is acknowledged, data runs on the RTO, not on the SYN timer.
TEST_F(TcpSenderTest, DataAfterAFastSynRetryUsesTheRto) {
  config.syn_rto = 20ms;
  config.rto_initial = 100ms;
  config.rto_min = 30ms;
  config.rto_after_syn_timeout = Duration::zero();
  config.linear_timeouts = 20;
  config.nagle = false;
  make();
  sender->push(now, sink());
  tick(20ms);
  expect_segment().syn();
  expect_segment().syn();
  sender->set_peer_options(default_peer());
  EXPECT_EQ(ack(1), AckResult::Advanced);  // ambiguous: no sample
  push("a");
  expect_segment().payload("a");
  tick(100ms - 1ms);
  expect_nothing_sent();
  tick(1ms);
  expect_segment().payload("a");
}

TEST_F(TcpSenderTest, GivesUpAfterMaxConsecutiveRetransmissions) {
  config.max_retransmissions = 3;
  establish();
  push("a");
  expect_segment();
  for (int i = 0; i < 3; ++i) {
    tick(rto());
    expect_segment().payload("a");
  }
  EXPECT_FALSE(sender->failure().has_value());
  tick(rto());
  expect_nothing_sent();
  ASSERT_TRUE(sender->failure().has_value());
  EXPECT_EQ(*sender->failure(), SenderFailure::MaxRetransmissions);
  EXPECT_FALSE(sender->next_deadline().has_value());
  push("b");
  expect_nothing_sent();
}

TEST_F(TcpSenderTest, GivesUpAfterTheUserTimeout) {
  config.user_timeout = 1500ms;
  establish();
  push("a");
  expect_segment();
  for (int i = 0; i < 3; ++i) {
    tick(rto());  // 200, 400 and 800 ms later: 1400 ms in all
    expect_segment().seqno(1).payload("a");
  }
  EXPECT_FALSE(sender->failure().has_value());
  EXPECT_EQ(sender->next_deadline(), Instant{} + 1500ms);
  tick(100ms);
  expect_nothing_sent();
  ASSERT_TRUE(sender->failure().has_value());
  EXPECT_EQ(*sender->failure(), SenderFailure::UserTimeout);
  EXPECT_EQ(to_string(*sender->failure()), "user timeout");
}

TEST_F(TcpSenderTest, UserTimeoutRestartsWhenDataIsAcknowledged) {
  config.user_timeout = 1s;
  establish();
  push("a");
  expect_segment().seqno(1).payload("a");
  tick(900ms);
  expect_segment().seqno(1).payload("a");  // the RTO
  ack(2);
  push("b");
  expect_segment().seqno(2).payload("b");
  tick(900ms);
  expect_segment().seqno(2).payload("b");
  EXPECT_FALSE(sender->failure().has_value());
}

// --- Zero window -----------------------------------------------------------

TEST_F(TcpSenderTest, ProbesAZeroWindowWithBackoff) {
  establish(default_peer(), 0);
  push("abc");
  expect_nothing_sent();
  const Duration interval = rto();
  ASSERT_EQ(sender->next_deadline(), now + interval);
  tick(interval - 1ms);
  expect_nothing_sent();
  tick(1ms);
  expect_segment().seqno(1).payload("a");  // RFC 9293 §3.8.6.1: one octet
  ack(1, 0);                               // still shut
  expect_nothing_sent();
  tick(2 * interval - 1ms);
  expect_nothing_sent();
  tick(1ms);
  expect_segment().seqno(1).payload("a");
  EXPECT_EQ(sender->stats().zero_window_probes, 2u);
  EXPECT_EQ(sender->stats().duplicate_acks, 0u) << "probe answers are not duplicate ACKs";
  ack(2, 100);  // the probe byte was taken and the window opened
  expect_segment().seqno(2).payload("bc");
}

TEST_F(TcpSenderTest, ZeroWindowProbingContinuesWhileThePeerAnswers) {
  config.max_retransmissions = 2;
  establish(default_peer(), 0);
  push("abc");
  expect_nothing_sent();
  for (int i = 0; i < 6; ++i) {
    tick(*sender->next_deadline() - now);
    expect_segment().seqno(1).payload("a");  // RFC 9293 §3.8.6.1: one octet
    ack(1, 0);
    expect_nothing_sent();
  }
  EXPECT_FALSE(sender->failure().has_value());
  EXPECT_EQ(sender->stats().zero_window_probes, 6u);
}

TEST_F(TcpSenderTest, UnansweredZeroWindowProbesGiveUp) {
  config.max_retransmissions = 2;
  establish(default_peer(), 0);
  push("abc");
  for (int i = 0; i < 2; ++i) {
    tick(*sender->next_deadline() - now);
    expect_segment().seqno(1).payload("a");
  }
  tick(*sender->next_deadline() - now);
  expect_nothing_sent();
  ASSERT_TRUE(sender->failure().has_value());
  EXPECT_EQ(*sender->failure(), SenderFailure::MaxRetransmissions);
}

TEST_F(TcpSenderTest, WindowThatClosesWithDataInFlightIsProbed) {
  establish();
  push("hello");
  expect_segment();
  ack(1, 0);  // nothing acknowledged, window shut
  tick(*sender->next_deadline() - now);
  expect_segment().seqno(1).payload("hello");
  EXPECT_EQ(sender->stats().zero_window_probes, 1u);
  EXPECT_EQ(sender->stats().rto_expirations, 0u);
}

// --- Fast retransmit and recovery ---------------------------------------------

class RecoveryTest : public TcpSenderTest {
 protected:
  void start(const char* cc, bool sack, size_t bytes = 30000) {
    config.congestion_control = cc;
    auto peer = default_peer();
    peer.send_window_shift = 4;
    peer.sack = sack;
    establish(peer);
    ack(1, 4096);  // window update to 64 KiB
    push_bytes(bytes);
    ASSERT_EQ(drain(), 10u);  // segments at 1, 1001, ..., 9001
  }
};

TEST_F(RecoveryTest, FastRetransmitOnThreeDuplicateAcks) {
  start("reno", false);
  ack(1001, 4096);  // segment 1001 lost; this ACK opens 2 more (slow start)
  ASSERT_EQ(drain(), 2u);
  ack(1001, 4096);
  expect_segment().seqno(12001);  // RFC 3042 limited transmit
  expect_nothing_sent();
  ack(1001, 4096);
  expect_segment().seqno(13001);
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().duplicate_acks, 2u);
  EXPECT_FALSE(sender->in_recovery());
  ack(1001, 4096);
  expect_segment().seqno(1001).payload_size(1000);  // RFC 5681 §3.2 step 2
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().fast_retransmits, 1u);
  EXPECT_TRUE(sender->in_recovery());
  // FlightSize 11000 (the limited-transmit segments excluded): ssthresh =
  // 5500, cwnd = ssthresh (duplicate ACKs are counted in pipe instead).
  EXPECT_EQ(sender->state().ssthresh, 5500u);
  EXPECT_EQ(sender->state().cwnd, 5500u);
}

TEST_F(RecoveryTest, DuplicateAcksWithDataOrWindowChangeDoNotCount) {
  start("reno", false);
  TcpSegment with_data;
  with_data.ack = true;
  with_data.seqno = kPeerSeq;
  with_data.ackno = Wrap32::wrap(1, kIsn);
  with_data.window = 4096;
  with_data.payload = "x";
  for (int i = 0; i < 3; ++i) {
    receive(with_data);
  }
  ack(1, 4000);
  ack(1, 4001);
  EXPECT_EQ(sender->stats().duplicate_acks, 0u);
  EXPECT_EQ(sender->stats().fast_retransmits, 0u);
}

TEST_F(RecoveryTest, FurtherDuplicateAcksReleaseNewData) {
  start("reno", false);
  ack(1, 4096);
  expect_segment().seqno(10001);  // RFC 3042
  ack(1, 4096);
  expect_segment().seqno(11001);
  ack(1, 4096);
  expect_segment().seqno(1);
  expect_nothing_sent();
  EXPECT_EQ(sender->state().cwnd, 5000u);
  // Pipe after n duplicate ACKs: 12000 outstanding, n * 1000 gone, the lost
  // segment replaced by its retransmission. RFC 5681's inflated window
  // (ssthresh + n * SMSS against FlightSize) allows exactly the same.
  for (int n = 4; n <= 7; ++n) {
    ack(1, 4096);
    expect_nothing_sent();  // pipe 8000 .. 5000
  }
  ack(1, 4096);
  expect_segment().seqno(12001);  // pipe 4000 -> 5000
  expect_nothing_sent();
  ack(1, 4096);
  expect_segment().seqno(13001);
  expect_nothing_sent();
}

TEST_F(RecoveryTest, NewRenoPartialAckRetransmitsTheNextHole) {
  start("newreno", false);  // segments 1 and 3001 lost
  for (int i = 0; i < 3; ++i) {
    ack(1, 4096);
  }
  EXPECT_EQ(sender->stats().fast_retransmits, 1u);
  drain();
  // The recovery point is 12001 (two limited-transmit segments went out).
  ack(3001, 4096);                                  // partial ACK
  expect_segment().seqno(3001).payload_size(1000);  // RFC 6582 §3.2 step 3
  EXPECT_TRUE(sender->in_recovery());
  drain();
  ack(11001, 4096);
  EXPECT_TRUE(sender->in_recovery());
  drain();
  ack(12001, 4096);  // full ACK
  EXPECT_FALSE(sender->in_recovery());
  EXPECT_EQ(sender->state().cwnd, sender->state().ssthresh);
  drain();  // new data in the deflated window
}

TEST_F(RecoveryTest, RenoPartialAckLeavesRecovery) {
  start("reno", false);
  for (int i = 0; i < 3; ++i) {
    ack(1, 4096);
  }
  EXPECT_EQ(sender->stats().fast_retransmits, 1u);
  drain();
  ack(3001, 4096);
  EXPECT_FALSE(sender->in_recovery());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_NE(sent[i].seqno, Wrap32::wrap(3001, kIsn)) << "Reno does not retransmit the hole";
  }
}

TEST_F(RecoveryTest, NoSecondReductionForLossesOfTheSameWindow) {
  start("newreno", false);
  ack(1, 4096);
  expect_segment().seqno(10001);  // RFC 3042
  ack(1, 4096);
  expect_segment().seqno(11001);
  ack(1, 4096);
  expect_segment().seqno(1);  // the fast retransmission
  expect_nothing_sent();
  const uint64_t ssthresh = sender->state().ssthresh;
  for (int i = 0; i < 10; ++i) {
    ack(1, 4096);
  }
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_NE(absolute(sent[i].seqno), 1u) << "a second retransmission of the hole";
  }
  drain();
  EXPECT_EQ(sender->stats().fast_retransmits, 1u);
  EXPECT_EQ(sender->state().ssthresh, ssthresh);
}

TEST_F(RecoveryTest, SackRecoveryRetransmitsOnlyTheHoles) {
  config.rack = false;            // RFC 6675 alone (the clock stands still: RACK would see RTT 0)
  start("newreno", true, 10000);  // no new data: only recovery sends
  // Lost: 1001 and 4001. The rest arrives and is SACKed.
  ack(1001, 4096, {{2001, 4001}});
  EXPECT_FALSE(sender->in_recovery())
      << "RFC 6675 IsLost(1001): 2 sacked segments, 2000 bytes = (DupThresh - 1) * SMSS: no";
  ack(1001, 4096, {{2001, 4001}, {5001, 6001}});
  ASSERT_TRUE(sender->in_recovery()) << "3 sacked segments above 1001";
  expect_segment().seqno(1001).payload_size(1000);
  expect_nothing_sent();
  // FlightSize 9000: cwnd = ssthresh = 4500. Pipe = 9000 - 3000 sacked -
  // 1000 lost + 1000 retransmitted = 6000.
  EXPECT_EQ(sender->state().cwnd, 4500u);
  EXPECT_EQ(sender->bytes_in_flight(), 6000u);
  ack(1001, 4096, {{2001, 4001}, {5001, 8001}});
  // 4001 is lost now (3 sacked above): pipe = 9000 - 5000 - 2000 + 1000 =
  // 3000, so NextSeg rule (1) sends the hole.
  expect_segment().seqno(4001).payload_size(1000);
  expect_nothing_sent();
  EXPECT_EQ(sender->bytes_in_flight(), 4000u);
  EXPECT_EQ(sender->stats().sack_recovered_segments, 2u);
  EXPECT_EQ(sender->stats().fast_retransmits, 1u);
  ack(4001, 4096, {{5001, 10001}});  // 1001's retransmission arrived: partial ACK
  EXPECT_TRUE(sender->in_recovery());
  expect_nothing_sent();
  ack(10001, 4096);  // the recovery point
  EXPECT_FALSE(sender->in_recovery());
  EXPECT_EQ(sender->stats().retransmitted_segments, 2u) << "sacked segments never resent";
}

TEST_F(RecoveryTest, SackPipeCountsOnlyWhatIsInTheNetwork) {
  start("newreno", true);
  ack(1001, 0, {{2001, 6001}});  // window 0: nothing new may be sent
  // outstanding 9000, sacked 4000, lost 1000 (1001: 4 sacked above), retransmitted 0.
  EXPECT_EQ(sender->bytes_in_flight(), 4000u);
  EXPECT_EQ(sender->stats().input_errors[SenderInputError::SackBlockOutOfWindow], 0u);
}

TEST_F(RecoveryTest, SackCanBeSwitchedOff) {
  config.sack = false;
  start("newreno", true);  // the peer offered SACK, our switch says no
  ack(1001, 4096, {{2001, 6001}});
  EXPECT_EQ(sender->stats().input_errors[SenderInputError::SackNotNegotiated], 1u);
  EXPECT_FALSE(sender->in_recovery());
  expect_segment().seqno(10001);  // slow start: two new segments, no retransmission
  expect_segment().seqno(11001);
  expect_nothing_sent();
}

TEST_F(RecoveryTest, TimeoutEndsRecoveryAndGoesBackN) {
  start("newreno", false);
  tick(rto());
  expect_segment().seqno(1);
  EXPECT_EQ(sender->state().cwnd, 1000u);  // RFC 5681 §3.1 loss window
  EXPECT_EQ(sender->state().ssthresh, 5000u);
  expect_nothing_sent();
  ack(1001, 4096);  // cwnd 2000: the next two lost segments go again
  expect_segment().seqno(1001);
  expect_segment().seqno(2001);
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().rto_expirations, 1u);
  EXPECT_EQ(sender->stats().retransmitted_segments, 3u);
}

// --- Congestion control choices ----------------------------------------------

TEST_F(TcpSenderTest, FixedWindowNeverExceedsNSegments) {
  config.congestion_control = "fixed:3";
  auto peer = default_peer();
  peer.send_window_shift = 4;
  establish(peer);
  push_bytes(30000);
  EXPECT_EQ(drain(), 3u);
  for (uint64_t acked = 1001; acked <= 20001; acked += 1000) {
    ack(acked, 4096);
    expect_segment().seqno(acked + 2000).payload_size(1000);  // one out for one in
    expect_nothing_sent();
    EXPECT_LE(sender->sequence_numbers_in_flight(), 3000u);
    EXPECT_EQ(sender->state().cwnd, 3000u);
  }
  tick(rto());  // no congestion response either
  expect_segment().seqno(20001).payload_size(1000);
  expect_nothing_sent();
  EXPECT_EQ(sender->state().cwnd, 3000u);
}

TEST_F(TcpSenderTest, StopAndWaitIsFixedOne) {
  // The window is N * SMSS bytes: full-size segments go one at a time.
  config.congestion_control = "fixed:1";
  establish();
  push_bytes(1000, 'a');
  push_bytes(1000, 'b');
  expect_segment().payload(std::string(1000, 'a'));
  expect_nothing_sent();
  ack(1001);
  expect_segment().payload(std::string(1000, 'b'));
  expect_nothing_sent();
}

TEST_F(TcpSenderTest, StopAndWaitHoldsOneSegmentHoweverSmall) {
  config.congestion_control = "fixed:1";
  config.nagle = false;
  establish();
  push("abc");
  push("def");
  expect_segment().payload("abc");
  expect_nothing_sent();
  ack(4);
  expect_segment().payload("def");
  tick(rto());
  expect_segment().payload("def");  // retransmission, still one segment
  expect_nothing_sent();
}

TEST_F(TcpSenderTest, FixedWindowCountsSegments) {
  config.congestion_control = "fixed:2";
  config.nagle = false;
  establish();
  for (const char* p : {"a", "b", "c"}) {
    push(p);
  }
  expect_segment().payload("a");
  expect_segment().payload("b");
  expect_nothing_sent();
  ack(2);
  expect_segment().payload("c");
}

TEST_F(TcpSenderTest, UnknownCongestionControlFallsBackToRenoAndSaysWhy) {
  config.congestion_control = "vegas";
  make();
  ASSERT_TRUE(sender->congestion_control_error().has_value());
  EXPECT_NE(sender->congestion_control_error()->find("vegas"), std::string::npos);
  EXPECT_EQ(sender->congestion_control().name(), "reno");
}

// --- Unacceptable ACKs -------------------------------------------------------

TEST_F(TcpSenderTest, ClassifiesEveryAck) {
  establish(default_peer(), 1000);  // MAX.SND.WND = 1000
  push_bytes(1000);
  ack(1001, 1000);
  push_bytes(1000);
  ack(2001, 1000);
  push_bytes(1000);
  drain();  // 2001..3001 outstanding
  TcpSegment no_ack;
  EXPECT_EQ(receive(no_ack), AckResult::NoAck);
  EXPECT_EQ(ack(5000, 1000), AckResult::Unsent);
  EXPECT_EQ(ack(2001, 1000), AckResult::Duplicate);
  EXPECT_EQ(ack(1500, 1000), AckResult::Old);     // within MAX.SND.WND below SND.UNA
  EXPECT_EQ(ack(1000, 1000), AckResult::TooOld);  // RFC 5961 §5.2
  EXPECT_EQ(ack(3001, 1000), AckResult::Advanced);
  const auto& s = sender->stats();
  EXPECT_EQ(s.ack_count(AckResult::NoAck), 1u);
  EXPECT_EQ(s.ack_count(AckResult::Unsent), 1u);
  EXPECT_EQ(s.ack_count(AckResult::Duplicate), 1u);
  EXPECT_EQ(s.ack_count(AckResult::Old), 1u);
  EXPECT_EQ(s.ack_count(AckResult::TooOld), 1u);
  EXPECT_EQ(s.ack_count(AckResult::Advanced), 4u);  // SYN-ACK, 1001, 2001, 3001
  EXPECT_EQ(sender->oldest_unacked(), Wrap32::wrap(3001, kIsn));
}

TEST_F(TcpSenderTest, AckBelowTheIsnIsOldOrTooOldNotUnsent) {
  establish(default_peer(), 1000);  // SND.UNA = ISN + 1, MAX.SND.WND = 1000
  push_bytes(500);
  drain();
  // Sequence numbers compare modulo 2^32 from SND.UNA (RFC 9293 §3.4): 10
  // below the ISN is 11 below SND.UNA, inside MAX.SND.WND, so the ACK field
  // is ignored and the segment used (RFC 5961 §5.2); 2000 below is too old.
  TcpSegment near;
  near.ack = true;
  near.seqno = kPeerSeq;
  near.ackno = kIsn - 10;
  near.window = 1000;
  EXPECT_EQ(receive(near), AckResult::Old);
  TcpSegment far = near;
  far.ackno = kIsn - 2000;
  EXPECT_EQ(receive(far), AckResult::TooOld);
  EXPECT_EQ(sender->stats().ack_count(AckResult::Unsent), 0u);
  EXPECT_EQ(sender->oldest_unacked(), kIsn + 1);
}

TEST_F(TcpSenderTest, AckBeyondSndNxtChangesNothing) {
  establish();
  push("abc");
  drain();
  EXPECT_EQ(ack(100, 0), AckResult::Unsent);
  EXPECT_EQ(sender->oldest_unacked(), Wrap32::wrap(1, kIsn));
  tick(rto());
  expect_segment().payload("abc");  // the window was not taken from it
}

TEST_F(TcpSenderTest, AckBeforeTheSynIsSentIsUnsent) {
  make();
  EXPECT_EQ(ack(0), AckResult::Unsent);
  expect_segment().syn().seqno(0);  // push() after the ACK sends the SYN
}

TEST_F(TcpSenderTest, NonsenseSackBlocksAreCountedAndIgnored) {
  // RFC 6675's DupAck path alone: the test clock never moves, and RACK would
  // call every segment sent "before" a SACKed one of the same instant lost.
  config.rack = false;
  auto peer = default_peer();
  peer.sack = true;
  establish(peer);
  push_bytes(5000);
  drain();
  ack(1001, 65535, {{3001, 2001}});  // inverted
  ack(1001, 65535, {{4001, 9001}});  // beyond SND.NXT
  ack(1001, 65535, {{501, 2001}});   // straddles SND.UNA
  ack(1001, 65535, {{201, 501}});    // D-SACK (RFC 2883), not an error
  // The blocks are ignored, and so are the ACKs as duplicates: with SACK a
  // duplicate ACK is one that SACKs something new (RFC 6675 §2), so ACKs
  // with nonsense blocks (or forged ones) cannot start a recovery, as with
  // Linux (sacked_out stays 0).
  expect_nothing_sent();
  EXPECT_EQ(sender->stats().fast_retransmits, 0u);
  EXPECT_EQ(sender->stats().duplicate_acks, 0u);
  EXPECT_FALSE(sender->in_recovery());
  const auto& e = sender->stats().input_errors;
  EXPECT_EQ(e[SenderInputError::SackBlockInverted], 1u);
  EXPECT_EQ(e[SenderInputError::SackBlockOutOfWindow], 2u);
  EXPECT_EQ(sender->stats().dsack_blocks, 1u);
  EXPECT_EQ(sender->bytes_in_flight(), 4000u) << "nothing was sacked";
  EXPECT_EQ(to_string(SenderInputError::SackBlockInverted), "SACK block with left >= right");
  // Three that each SACK a new segment are duplicates: a fast retransmission
  // (RFC 6675 §5, DupAcks >= DupThresh).
  ack(1001, 65535, {{2001, 3001}});
  ack(1001, 65535, {{2001, 4001}});
  ack(1001, 65535, {{2001, 5001}});
  expect_segment().seqno(1001).payload_size(1000);
  EXPECT_EQ(sender->stats().fast_retransmits, 1u);
  EXPECT_EQ(sender->stats().duplicate_acks, 3u);
}

TEST_F(TcpSenderTest, ShrunkWindowIsCountedAndHonoured) {
  config.nagle = false;
  establish(default_peer(), 3000);
  push_bytes(1000);
  drain();
  ack(1, 500);  // right edge moved from 3001 to 501
  EXPECT_EQ(sender->stats().input_errors[SenderInputError::WindowShrunk], 1u);
  push_bytes(100);
  expect_nothing_sent();
}

TEST_F(TcpSenderTest, OldWindowUpdatesAreIgnored) {
  config.nagle = false;
  establish(default_peer(), 1000);
  push_bytes(3000);
  drain();
  TcpSegment newer;
  newer.ack = true;
  newer.seqno = kPeerSeq + 10;
  newer.ackno = Wrap32::wrap(1001, kIsn);
  newer.window = 0;
  receive(newer);
  TcpSegment older = newer;  // reordered: an earlier segment with a big window
  older.seqno = kPeerSeq;
  older.window = 5000;
  receive(older);
  expect_nothing_sent();  // RFC 9293 §3.10.7.4: SND.WL1 rule
}

TEST_F(TcpSenderTest, TimestampEchoFromTheFutureIsCounted) {
  auto peer = default_peer();
  peer.timestamps = true;
  establish(peer);
  push("a");
  drain();
  ack(2, 65535, {}, sender->timestamp_value(now) + 1000);
  EXPECT_EQ(sender->stats().input_errors[SenderInputError::TimestampEchoInFuture], 1u);
}

TEST_F(TcpSenderTest, NonsensePeerOptionsAreClamped) {
  make();
  PeerOptions p;
  p.mss = 1;
  p.send_window_shift = 30;
  sender->set_peer_options(p);
  EXPECT_EQ(sender->stats().input_errors[SenderInputError::WindowScaleTooLarge], 1u);
  EXPECT_EQ(sender->stats().input_errors[SenderInputError::PeerMssTooSmall], 1u);
  EXPECT_EQ(sender->max_payload(), 64u);
}

// --- Keepalive -----------------------------------------------------------------

TEST_F(TcpSenderTest, NoKeepaliveByDefault) {
  establish();
  EXPECT_FALSE(sender->next_deadline().has_value());
  tick(3h);
  expect_nothing_sent();
}

TEST_F(TcpSenderTest, KeepaliveProbesAnIdleConnection) {
  config.keepalive = true;
  config.keepalive_idle = 10s;
  config.keepalive_interval = 2s;
  config.keepalive_probes = 3;
  establish();
  push("hi");
  ack(3);
  drain();
  tick(10s - 1ms);
  expect_nothing_sent();
  tick(1ms);
  expect_segment().seqno(2).payload("");  // RFC 1122 §4.2.3.6: SND.NXT - 1
  ack(3);                                 // answered: idle again
  tick(10s);
  expect_segment().seqno(2);
  tick(2s);
  expect_segment().seqno(2);
  tick(2s);
  expect_segment().seqno(2);
  EXPECT_FALSE(sender->failure().has_value());
  tick(2s);
  ASSERT_TRUE(sender->failure().has_value());
  EXPECT_EQ(*sender->failure(), SenderFailure::KeepaliveTimeout);
  EXPECT_EQ(sender->stats().keepalive_probes, 4u);
}

// --- Trace -----------------------------------------------------------------

TEST_F(TcpSenderTest, TraceFiresOnEveryCwndOrRttChange) {
  auto peer = default_peer();
  peer.send_window_shift = 4;
  make();
  std::vector<SenderState> trace;
  sender->set_trace([&](Instant, const SenderState& s) { trace.push_back(s); });
  sender->push(now, sink());
  expect_segment().syn();
  sender->set_peer_options(peer);  // cwnd from 10 * 536 to 10 * 1000: not an event yet
  now += 10ms;
  TcpSegment syn_ack;
  syn_ack.syn = true;
  syn_ack.ack = true;
  syn_ack.seqno = kPeerSeq - 1;
  syn_ack.ackno = Wrap32::wrap(1, kIsn);
  syn_ack.window = 65535;
  receive(syn_ack);
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.back().srtt, 10ms);
  const size_t n = trace.size();
  push_bytes(10000);
  EXPECT_EQ(drain(), 10u);
  now += 10ms;
  ack(1001, 4096);
  expect_nothing_sent();  // nothing more written
  ASSERT_GT(trace.size(), n);
  EXPECT_EQ(trace.back().cwnd, 11000u);
  const size_t m = trace.size();
  ack(1001, 4096);  // a duplicate changes neither
  EXPECT_EQ(trace.size(), m);
}

// --- Buffers ------------------------------------------------------------------

TEST_F(TcpSenderTest, SegmentCrossingTheRingWrapPointIsIntact) {
  config.send_buffer_bytes = 2500;
  config.nagle = false;
  establish();
  push(std::string(2000, 'a'));
  drain();
  ack(2001);  // stream popped 2000: the ring's read position is at 2000 of 2500
  std::string data;
  for (int i = 0; i < 1000; ++i) {
    data.push_back(static_cast<char>('A' + i % 26));
  }
  push(data);
  expect_segment().seqno(2001).payload(data);
}

TEST_F(TcpSenderTest, AcknowledgedBytesLeaveTheSendBuffer) {
  config.send_buffer_bytes = 4000;
  establish();
  push_bytes(4000);
  EXPECT_EQ(drain(), 4u);
  EXPECT_EQ(sender->outbound().available_capacity(), 0u);
  ack(2001);
  EXPECT_EQ(sender->outbound().available_capacity(), 2000u);
}

// Autotuning (TcpConfig::autotune_send_buffer): the application may keep
// max(floor, 2 * cwnd) bytes not yet sent; bytes in flight do not count. As
// slow start grows cwnd, so does what it may write. Without it, the whole
// free buffer.
TEST_F(TcpSenderTest, AutotunedSendBufferFollowsTheWindow) {
  config.send_buffer_bytes = 1 << 20;
  config.autotune_send_buffer = true;
  config.send_buffer_floor = 0;
  config.nagle = false;
  establish();
  uint64_t sent_bytes = 0;
  const auto count_sent = [&] {
    for (const auto& seg : sent) {
      sent_bytes += seg.payload.size();
    }
    drain();
  };
  const uint64_t cwnd = sender->state().cwnd;
  ASSERT_GT(cwnd, 0u);
  EXPECT_EQ(sender->writable_bytes(), 2 * cwnd);
  push_bytes(3 * cwnd);  // one window goes out, two wait
  count_sent();
  EXPECT_EQ(sent_bytes, cwnd);
  EXPECT_EQ(sender->writable_bytes(), 0u);
  ack(1 + cwnd);  // slow start grows cwnd, and more goes out
  count_sent();
  const uint64_t grown = sender->state().cwnd;
  EXPECT_GT(grown, cwnd);
  const uint64_t unsent = 3 * cwnd - sent_bytes;
  EXPECT_EQ(sender->writable_bytes(), 2 * grown > unsent ? 2 * grown - unsent : 0);
  EXPECT_GT(sender->writable_bytes(), 0u);
}

TEST_F(TcpSenderTest, AutotunedSendBufferHasAFloorAndACap) {
  config.autotune_send_buffer = true;
  config.send_buffer_floor = 100'000;
  config.send_buffer_bytes = 1 << 20;
  establish();
  EXPECT_EQ(sender->writable_bytes(), 100'000u);  // 2 * cwnd is less
  config.send_buffer_bytes = 50'000;
  establish();
  EXPECT_EQ(sender->writable_bytes(), 50'000u);  // never past the buffer
  config.autotune_send_buffer = false;
  config.send_buffer_bytes = 1 << 20;
  establish();
  EXPECT_EQ(sender->writable_bytes(), sender->outbound().available_capacity());
}

// --- Property: arbitrary ACKs never break the sender's invariants ----------------

// The sender against a reference model of its sequence space (RFC 9293
// §3.10.7.4): SND.NXT is the end of the highest segment it sent, SND.UNA moves
// exactly on an ACK in (SND.UNA, SND.NXT], and the classification of every
// ACK follows from the two. The harness checks every segment besides: inside
// the peer's window (or a one-octet zero-window probe), at most max_payload(),
// the bytes written at that sequence number.
TEST_F(TcpSenderTest, RandomAcksKeepInvariants) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 0x7cb5e4d);
  SCOPED_TRACE(::testing::Message() << "TINYTCP_SEED=" << seed);
  Rng rng(seed);
  uint64_t advanced = 0;
  uint64_t refused = 0;
  for (int run = 0; run < 20; ++run) {
    SCOPED_TRACE(::testing::Message() << "run " << run);
    config.congestion_control = run % 3 == 0 ? "cubic" : (run % 3 == 1 ? "reno" : "newreno");
    auto peer = default_peer();
    peer.sack = run % 2 == 0;
    peer.send_window_shift = static_cast<uint8_t>(rng.uniform(0, 14));
    establish(peer);
    uint64_t una = 1;  // the model's SND.UNA and SND.NXT, absolute
    uint64_t nxt = 1;
    const auto take_sent = [&] {
      for (const SentSegment& s : sent) {
        const uint64_t end = absolute(s.seqno) + s.payload.size() + (s.fin ? 1 : 0);
        nxt = std::max(nxt, end);
      }
      drain();
    };
    bool closed = false;
    for (int step = 0; step < 300; ++step) {
      if (!closed && rng.chance(0.3)) {
        push_bytes(rng.uniform(1, 5000));
      }
      if (!closed && rng.chance(0.01)) {
        close();  // the FIN follows the last byte
        closed = true;
      }
      take_sent();
      ASSERT_EQ(sender->next_seqno(), Wrap32::wrap(nxt, kIsn));
      uint64_t a = una;
      if (rng.chance(0.2)) {
        // The edges of (SND.UNA, SND.NXT], where off-by-ones live.
        const uint64_t edges[] = {una - 1, una, una + 1, nxt - 1, nxt, nxt + 1};
        a = edges[rng.uniform(0, 5)];
      } else if (rng.chance(0.5) && nxt > una) {
        a = rng.uniform(una, nxt);
      } else if (rng.chance(0.2)) {
        a = rng.next();
      } else if (rng.chance(0.2)) {
        a = nxt + rng.uniform(1, 3000);  // not yet sent
      }
      // The sender sees 32 bits: the model unwraps them next to SND.UNA.
      const int64_t acked =
          static_cast<int64_t>(una) +
          static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(una));
      std::vector<std::pair<uint64_t, uint64_t>> blocks;
      for (uint64_t b = rng.uniform(0, 4); b > 0; --b) {
        const uint64_t l = rng.chance(0.8) ? rng.uniform(una, nxt + 10) : rng.next();
        blocks.emplace_back(l, l + rng.uniform(0, 3000));
      }
      const AckResult r = ack(a, static_cast<uint16_t>(rng.uniform(0, 65535)), blocks);
      if (acked > static_cast<int64_t>(una) && acked <= static_cast<int64_t>(nxt)) {
        ASSERT_EQ(r, AckResult::Advanced)
            << "ACK " << acked << ", SND.UNA " << una << ", SND.NXT " << nxt;
        una = static_cast<uint64_t>(acked);
        ++advanced;
      } else if (acked == static_cast<int64_t>(una)) {
        ASSERT_EQ(r, AckResult::Duplicate) << "ACK " << acked;
      } else if (acked > static_cast<int64_t>(nxt)) {
        ASSERT_EQ(r, AckResult::Unsent) << "ACK " << acked << ", SND.NXT " << nxt;
        ++refused;
      } else {
        // Below SND.UNA, before the ISN too (modular comparison, as Linux).
        ASSERT_TRUE(r == AckResult::Old || r == AckResult::TooOld)
            << "ACK " << acked << " below SND.UNA " << una << ": " << to_string(r);
        ++refused;
      }
      ASSERT_EQ(sender->oldest_unacked(), Wrap32::wrap(una, kIsn));
      take_sent();
      if (rng.chance(0.2)) {
        tick(std::chrono::milliseconds(rng.uniform(0, 2000)));
        take_sent();
        if (const auto next = sender->next_deadline(); next && !sender->failure()) {
          ASSERT_GT(*next, now) << "a timer due now did not fire";
        }
      }
      ASSERT_EQ(sender->next_seqno(), Wrap32::wrap(nxt, kIsn));
      ASSERT_EQ(sender->sequence_numbers_in_flight(), nxt - una);
      ASSERT_LE(sender->bytes_in_flight(), nxt - una);
      ASSERT_GE(sender->state().cwnd, 1u);
      ASSERT_LE(sender->outbound().bytes_buffered(), config.send_buffer_bytes);
      if (sender->failure()) {
        break;
      }
    }
  }
  // Both sides of the model were exercised.
  EXPECT_GT(advanced, 100u);
  EXPECT_GT(refused, 100u);
}

}  // namespace
}  // namespace tinytcp::tcp

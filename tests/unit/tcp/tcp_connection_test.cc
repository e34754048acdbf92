#include "tcp/tcp_connection.hh"

#include <gtest/gtest.h>

#include <deque>
#include <string>

#include "unit/tcp/tcp_connection_harness.hh"

namespace tinytcp::tcp {
namespace {

TEST_F(TcpConnectionTest, ActiveOpenSendsSynWithEveryOption) {
  conn_->connect(now_);
  EXPECT_EQ(conn_->state(), TcpState::SynSent);
  const auto syn = expect_segment();
  EXPECT_TRUE(syn.syn);
  EXPECT_FALSE(syn.ack);
  EXPECT_EQ(syn.seqno, kIsn);
  EXPECT_EQ(syn.options.mss, 1460);
  EXPECT_EQ(syn.options.window_scale, 5);  // 1 MiB buffer
  EXPECT_TRUE(syn.options.sack_permitted);
  EXPECT_TRUE(syn.options.timestamps);
  EXPECT_EQ(syn.window, 65535);
}

TEST_F(TcpConnectionTest, ActiveOpenEstablishesOnSynAck) {
  establish_active();
  EXPECT_EQ(conn_->sender().max_payload(), 1400u);  // the peer's MSS, no timestamps
}

TEST_F(TcpConnectionTest, PassiveOpenAnswersWithTheOfferedSubset) {
  conn_->listen();
  TcpSegment syn = peer_syn(false);
  syn.options.window_scale.reset();
  syn.options.sack_permitted = false;
  deliver(syn);
  EXPECT_EQ(conn_->state(), TcpState::SynReceived);
  const auto synack = expect_segment();
  EXPECT_TRUE(synack.syn && synack.ack);
  EXPECT_EQ(synack.ackno, kPeerIsn + 1);
  EXPECT_EQ(synack.options.mss, 1460);
  EXPECT_FALSE(synack.options.window_scale);  // RFC 7323 §1.3
  EXPECT_FALSE(synack.options.sack_permitted);
  EXPECT_FALSE(synack.options.timestamps);
  deliver(peer(0));
  EXPECT_EQ(conn_->state(), TcpState::Established);
}

TEST_F(TcpConnectionTest, PassiveOpenSendsTheSynAckAndNothingElse) {
  // The SYN-ACK's window is never scaled (at most 65535), less than the
  // buffer; a window update in SYN-RECEIVED would be a second segment per
  // SYN that the peer (SYN-SENT, RFC 9293 §3.10.7.3) drops for want of a SYN.
  config_.receive_buffer_bytes = 1 << 20;
  make();
  conn_->listen();
  deliver(peer_syn(false));
  EXPECT_TRUE(expect_segment().syn);
  advance(std::chrono::milliseconds(1));
  expect_nothing_sent();
  deliver(peer(0));
  EXPECT_EQ(conn_->state(), TcpState::Established);
}

TEST_F(TcpConnectionTest, PassiveOpenResendsSynAckOnRetransmittedSyn) {
  conn_->listen();
  deliver(peer_syn(false));
  expect_segment();
  deliver(peer_syn(false));
  const auto again = expect_segment();
  EXPECT_TRUE(again.syn && again.ack);
  EXPECT_EQ(again.seqno, kIsn);
}

TEST_F(TcpConnectionTest, SimultaneousOpen) {
  conn_->connect(now_);
  expect_segment();
  deliver(peer_syn(false));
  EXPECT_EQ(conn_->state(), TcpState::SynReceived);
  const auto synack = expect_segment();
  EXPECT_TRUE(synack.syn && synack.ack);
  EXPECT_EQ(synack.seqno, kIsn);
  deliver(peer(0));
  EXPECT_EQ(conn_->state(), TcpState::Established);
}

TEST_F(TcpConnectionTest, ListenAnswersAckWithRstAndDropsRst) {
  conn_->listen();
  TcpSegment ack = peer(0);
  ack.ackno = Wrap32{777};
  deliver(ack);
  const auto rst = expect_segment();
  EXPECT_TRUE(rst.rst);
  EXPECT_EQ(rst.seqno, Wrap32{777});
  EXPECT_EQ(drops(ConnectionDrop::ListenAck), 1u);
  TcpSegment r = peer(0, "", false);
  r.rst = true;
  deliver(r);
  expect_nothing_sent();
  EXPECT_EQ(drops(ConnectionDrop::ListenRst), 1u);
  deliver(peer(0, "data", false));
  expect_nothing_sent();
  EXPECT_EQ(drops(ConnectionDrop::ListenNotSyn), 1u);
  EXPECT_EQ(conn_->state(), TcpState::Listen);
}

TEST_F(TcpConnectionTest, SynSentAnswersBadAckWithRst) {
  conn_->connect(now_);
  expect_segment();
  TcpSegment synack = peer_syn(true);
  synack.ackno = kIsn + 5;
  deliver(synack);
  const auto rst = expect_segment();
  EXPECT_TRUE(rst.rst);
  EXPECT_EQ(rst.seqno, kIsn + 5);
  EXPECT_EQ(conn_->state(), TcpState::SynSent);
  EXPECT_EQ(drops(ConnectionDrop::SynSentBadAck), 1u);
}

TEST_F(TcpConnectionTest, SynSentRstWithAcceptableAckIsRefused) {
  conn_->connect(now_);
  expect_segment();
  TcpSegment rst;
  rst.rst = true;
  rst.seqno = Wrap32{0};
  deliver(rst);  // no ACK: ignored
  EXPECT_EQ(drops(ConnectionDrop::SynSentRstNoAck), 1u);
  rst.ack = true;
  rst.ackno = kIsn + 1;
  deliver(rst);
  EXPECT_EQ(conn_->state(), TcpState::Closed);
  EXPECT_EQ(conn_->close_reason(), CloseReason::Refused);
  EXPECT_TRUE(conn_->inbound().has_error());
}

TEST_F(TcpConnectionTest, SynSentDropsSegmentsWithoutSyn) {
  conn_->connect(now_);
  expect_segment();
  deliver(peer(0, "x", false));
  EXPECT_EQ(drops(ConnectionDrop::SynSentNoSyn), 1u);
  expect_nothing_sent();
}

TEST_F(TcpConnectionTest, SynIsRetransmittedThenGivesUp) {
  config_.max_syn_retransmissions = 2;
  make();
  conn_->connect(now_);
  expect_segment();
  advance(seconds(1));
  EXPECT_TRUE(expect_segment().syn);
  advance(seconds(2));
  EXPECT_TRUE(expect_segment().syn);
  advance(seconds(4));
  EXPECT_EQ(conn_->state(), TcpState::Closed);
  EXPECT_EQ(conn_->close_reason(), CloseReason::TimedOut);
}

TEST_F(TcpConnectionTest, RstAtRcvNxtResets) {
  establish_active();
  TcpSegment rst = peer(0);
  rst.rst = true;
  deliver(rst);
  EXPECT_EQ(conn_->state(), TcpState::Closed);
  EXPECT_EQ(conn_->close_reason(), CloseReason::ResetByPeer);
  EXPECT_TRUE(conn_->outbound().has_error());
}

TEST_F(TcpConnectionTest, RstInWindowGetsAChallengeAck) {
  establish_active();
  TcpSegment rst = peer(100);
  rst.rst = true;
  deliver(rst);
  EXPECT_EQ(conn_->state(), TcpState::Established);
  const auto ack = expect_segment();
  EXPECT_TRUE(ack.ack);
  EXPECT_FALSE(ack.rst);
  EXPECT_EQ(ack.ackno, kPeerIsn + 1);
  EXPECT_EQ(conn_->stats().challenge_acks, 1u);
  EXPECT_EQ(drops(ConnectionDrop::RstInWindow), 1u);
}

TEST_F(TcpConnectionTest, RstOutsideTheWindowIsDroppedSilently) {
  establish_active();
  TcpSegment rst = peer(0);
  rst.seqno = kPeerIsn - 100;
  rst.rst = true;
  deliver(rst);
  expect_nothing_sent();
  EXPECT_EQ(drops(ConnectionDrop::RstOutOfWindow), 1u);
  EXPECT_EQ(conn_->state(), TcpState::Established);
}

TEST_F(TcpConnectionTest, ChallengeAcksAreRateLimited) {
  config_.challenge_ack_limit_per_second = 2;
  make();
  establish_active();
  TcpSegment rst = peer(10);
  rst.rst = true;
  for (int i = 0; i < 5; ++i) {
    deliver(rst);
  }
  EXPECT_EQ(conn_->stats().challenge_acks, 2u);
  EXPECT_EQ(drops(ConnectionDrop::ChallengeAckRateLimited), 3u);
  now_ += seconds(1);
  deliver(rst);
  EXPECT_EQ(conn_->stats().challenge_acks, 3u);
}

TEST_F(TcpConnectionTest, SynInEstablishedGetsAChallengeAck) {
  establish_active();
  TcpSegment syn = peer(5);
  syn.syn = true;
  deliver(syn);
  EXPECT_EQ(conn_->state(), TcpState::Established);
  // RFC 5961 §4.2 (RFC 9293 §3.10.7.4, fourth check): whatever its sequence
  // number, an ACK of RCV.NXT at SND.NXT, and no reset.
  const auto ack = expect_segment();
  EXPECT_TRUE(ack.ack);
  EXPECT_FALSE(ack.rst);
  EXPECT_FALSE(ack.syn);
  EXPECT_EQ(ack.ackno, kPeerIsn + 1);
  EXPECT_EQ(ack.seqno, kIsn + 1);
  EXPECT_EQ(last_payload_, "");
  expect_nothing_sent();
  EXPECT_EQ(conn_->stats().challenge_acks, 1u);
  EXPECT_EQ(drops(ConnectionDrop::SynSynchronized), 1u);
  EXPECT_EQ(conn_->stats().drops.total(), 1u);
}

TEST_F(TcpConnectionTest, SegmentWithoutAckIsDropped) {
  establish_active();
  deliver(peer(0, "abc", false));
  EXPECT_EQ(drops(ConnectionDrop::NoAck), 1u);
  EXPECT_EQ(conn_->inbound().bytes_buffered(), 0u);
}

TEST_F(TcpConnectionTest, AckOfUnsentDataIsAnsweredAndDropped) {
  establish_active();
  TcpSegment s = peer(0, "abc");
  s.ackno = kIsn + 100;
  deliver(s);
  EXPECT_EQ(drops(ConnectionDrop::AckUnsent), 1u);
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 1);
  EXPECT_EQ(conn_->inbound().bytes_buffered(), 0u);
}

TEST_F(TcpConnectionTest, DataIsDeliveredAndAcked) {
  establish_active();
  deliver(peer(0, "hello"));
  EXPECT_EQ(conn_->inbound().peek(), "hello");
  expect_nothing_sent();  // delayed ACK
  advance(milliseconds(40));
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 6);
}

TEST_F(TcpConnectionTest, AppDataIsSent) {
  establish_active();
  conn_->outbound().push("request");
  conn_->tick(now_);
  const auto s = expect_segment();
  EXPECT_EQ(last_payload_, "request");
  EXPECT_EQ(s.seqno, kIsn + 1);
  EXPECT_TRUE(s.ack);
}

TEST_F(TcpConnectionTest, WeCloseFirstThroughTimeWait) {
  establish_active();
  conn_->shutdown_write(now_);
  EXPECT_EQ(conn_->state(), TcpState::FinWait1);
  const auto fin = expect_segment();
  EXPECT_TRUE(fin.fin);
  our_nxt_ = kIsn + 2;
  deliver(peer(0));
  EXPECT_EQ(conn_->state(), TcpState::FinWait2);
  // The peer keeps sending: half-close.
  deliver(peer(0, "more"));
  EXPECT_EQ(conn_->inbound().peek(), "more");
  TcpSegment pfin = peer(4);
  pfin.fin = true;
  deliver(pfin);
  EXPECT_EQ(conn_->state(), TcpState::TimeWait);
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 6);
  // A retransmitted FIN is ACKed again and restarts the timer.
  advance(milliseconds(1500));
  deliver(pfin);
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 6);
  advance(milliseconds(1999));
  EXPECT_EQ(conn_->state(), TcpState::TimeWait);
  advance(milliseconds(1));
  EXPECT_EQ(conn_->state(), TcpState::Closed);
  EXPECT_EQ(conn_->close_reason(), CloseReason::Normal);
}

TEST_F(TcpConnectionTest, PeerClosesFirstThroughLastAck) {
  establish_active();
  TcpSegment pfin = peer(0);
  pfin.fin = true;
  deliver(pfin);
  EXPECT_EQ(conn_->state(), TcpState::CloseWait);
  EXPECT_TRUE(conn_->inbound().is_finished());
  expect_segment();
  conn_->outbound().push("bye");
  conn_->shutdown_write(now_);
  EXPECT_EQ(conn_->state(), TcpState::LastAck);
  const auto fin = expect_segment();
  EXPECT_TRUE(fin.fin);
  EXPECT_EQ(last_payload_, "bye");
  our_nxt_ = kIsn + 5;
  deliver(peer(1));
  EXPECT_EQ(conn_->state(), TcpState::Closed);
  EXPECT_EQ(conn_->close_reason(), CloseReason::Normal);
}

TEST_F(TcpConnectionTest, SimultaneousCloseGoesThroughClosing) {
  establish_active();
  conn_->shutdown_write(now_);
  expect_segment();
  TcpSegment pfin = peer(0);
  pfin.fin = true;  // does not ACK our FIN
  deliver(pfin);
  EXPECT_EQ(conn_->state(), TcpState::Closing);
  expect_segment();
  our_nxt_ = kIsn + 2;
  deliver(peer(1));
  EXPECT_EQ(conn_->state(), TcpState::TimeWait);
}

TEST_F(TcpConnectionTest, AbortSendsRst) {
  establish_active();
  conn_->abort(now_);
  const auto rst = expect_segment();
  EXPECT_TRUE(rst.rst);
  EXPECT_EQ(rst.seqno, kIsn + 1);
  EXPECT_EQ(conn_->close_reason(), CloseReason::Aborted);
}

TEST_F(TcpConnectionTest, ClosedAnswersWithRst) {
  deliver(peer(0, "x", false));
  const auto rst = expect_segment();
  EXPECT_TRUE(rst.rst && rst.ack);
  EXPECT_EQ(rst.ackno, kPeerIsn + 2);
  TcpSegment r = peer(0);
  r.rst = true;
  deliver(r);
  expect_nothing_sent();
  EXPECT_EQ(drops(ConnectionDrop::Closed), 2u);
}

TEST_F(TcpConnectionTest, NextDeadlineCoversDelayedAckAndRto) {
  establish_active();
  EXPECT_FALSE(conn_->next_deadline());
  deliver(peer(0, "x"));
  EXPECT_EQ(conn_->next_deadline(), now_ + milliseconds(40));
  conn_->outbound().push("y");
  conn_->tick(now_);
  ASSERT_TRUE(conn_->next_deadline());
  EXPECT_GT(*conn_->next_deadline(), now_ + milliseconds(40));  // ACK went with the data
}

TEST_F(TcpConnectionTest, SummaryCountsTrafficAndTraceSeesRttChanges) {
  int traces = 0;
  conn_->set_trace([&](Instant, const SenderState&) { ++traces; });
  establish_active();
  EXPECT_GT(traces, 0);  // the SYN-ACK gave the first RTT sample
  deliver(peer(0, "hello"));
  conn_->outbound().push("world!");
  conn_->tick(now_);
  expect_segment();
  const auto s = conn_->summary();
  EXPECT_EQ(s.segments_in, 2u);
  EXPECT_EQ(s.bytes_in, 5u);
  EXPECT_EQ(s.segments_out, 3u);  // SYN, ACK, data
  EXPECT_EQ(s.bytes_out, 6u);
  EXPECT_GT(s.sender.cwnd, 0u);
  EXPECT_GT(s.sender.rto, Duration::zero());
}

TEST_F(TcpConnectionTest, ZeroWindowStillTakesAcksAtRcvNxt) {
  config_.receive_buffer_bytes = 1000;
  config_.window_scale = false;
  make();
  establish_active();
  deliver(peer(0, std::string(1000, 'a')));
  conn_->outbound().push("x");
  conn_->tick(now_);
  const auto data = expect_segment();  // carries the ACK: window now zero
  EXPECT_EQ(data.window, 0);
  // The peer's zero-window probe carries an ACK of our byte: RFC 9293
  // §3.10.7.4 lets the ACK through although the byte is refused.
  our_nxt_ = kIsn + 2;
  deliver(peer(1000, "z"));
  EXPECT_EQ(conn_->sender().oldest_unacked(), kIsn + 2);
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 1001);
}

TEST_F(TcpConnectionTest, ReadingAFullBufferMakesATickDueAtOnce) {
  config_.receive_buffer_bytes = 4000;
  config_.window_scale = false;
  make();
  establish_active();
  deliver(peer(0, std::string(4000, 'a')));
  advance(milliseconds(40));
  EXPECT_EQ(expect_segment().window, 0);
  EXPECT_FALSE(conn_->next_deadline());
  conn_->inbound().pop(2000);
  ASSERT_TRUE(conn_->next_deadline());
  EXPECT_LE(*conn_->next_deadline(), now_);
  conn_->tick(now_);
  EXPECT_EQ(expect_segment().window, 2000);  // the window update
  EXPECT_FALSE(conn_->next_deadline());
}

TEST_F(TcpConnectionTest, EveryNameIsKnown) {
  for (size_t i = 0; i < static_cast<size_t>(TcpState::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<TcpState>(i)), "unknown");
  }
  for (size_t i = 0; i < static_cast<size_t>(CloseReason::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<CloseReason>(i)), "unknown");
  }
  for (size_t i = 0; i < static_cast<size_t>(ConnectionDrop::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<ConnectionDrop>(i)), "unknown");
  }
}

}  // namespace
}  // namespace tinytcp::tcp

#include "tcp/tcp_connection.hh"

#include <algorithm>
#include <chrono>
#include <utility>

#include <spdlog/spdlog.h>

namespace tinytcp::tcp {

TcpConnection::TcpConnection(const TcpConfig& config, Wrap32 isn, Transmit transmit,
                             std::optional<uint32_t> ts_offset)
    : config_(config),
      transmit_(std::move(transmit)),
      sender_(config, isn, ts_offset),
      receiver_(config, sender_.timestamp_offset()) {}

bool TcpConnection::synchronized() const {
  return state_ != TcpState::Closed && state_ != TcpState::Listen && state_ != TcpState::SynSent;
}

// ---------------------------------------------------------------------------
// User calls (RFC 9293 §3.10.1 - §3.10.5)

void TcpConnection::connect(Instant now) {
  if (state_ != TcpState::Closed || sender_.syn_sent()) {
    return;
  }
  state_ = TcpState::SynSent;
  push(now);
}

void TcpConnection::listen() {
  if (state_ == TcpState::Closed && !sender_.syn_sent()) {
    state_ = TcpState::Listen;
  }
}

void TcpConnection::open_from_cookie(const TcpSegment& syn, Instant now) {
  if (state_ != TcpState::Closed || sender_.syn_sent()) {
    return;
  }
  negotiate(syn);
  receiver_.on_syn(syn, now);
  sender_.set_passive_open();
  sender_.restore_syn(now);
  state_ = TcpState::SynReceived;
}

void TcpConnection::shutdown_write(Instant now) {
  switch (state_) {
    case TcpState::Listen:
    case TcpState::SynSent:
      // RFC 9293 §3.10.4: delete the TCB; nothing was synchronized.
      outbound().close();
      close(CloseReason::Normal);
      return;
    case TcpState::SynReceived:
    case TcpState::Established:
      outbound().close();
      state_ = TcpState::FinWait1;  // the FIN follows the queued data
      break;
    case TcpState::CloseWait:
      outbound().close();
      state_ = TcpState::LastAck;
      break;
    default:
      return;  // already closing
  }
  push(now);
}

void TcpConnection::abort(Instant now) {
  static_cast<void>(now);
  switch (state_) {
    case TcpState::SynReceived:
    case TcpState::Established:
    case TcpState::FinWait1:
    case TcpState::FinWait2:
    case TcpState::CloseWait:
      send_reset();  // RFC 9293 §3.10.5
      break;
    default:
      break;
  }
  if (state_ != TcpState::Closed) {
    close(CloseReason::Aborted);
  }
}

void TcpConnection::orphan(Instant now) {
  if (orphaned_) {
    return;
  }
  orphaned_ = true;
  sender_.set_orphaned();
  if (state_ == TcpState::FinWait2) {
    fin_wait2_deadline_ = now + config_.fin_wait2_timeout;
  }
}

bool TcpConnection::on_path_mtu(uint32_t mtu, Wrap32 quoted_seq, Instant now) {
  if (!synchronized() || state_ == TcpState::TimeWait || !sender_.in_flight(quoted_seq)) {
    return false;
  }
  if (sender_.on_path_mtu(mtu, now)) {
    push(now);
  }
  return true;
}

bool TcpConnection::on_send_failed(Wrap32 seqno, Instant now) {
  return synchronized() && state_ != TcpState::TimeWait && sender_.on_send_failed(seqno, now);
}

std::optional<TimeWait> TcpConnection::time_wait() const {
  if (state_ != TcpState::TimeWait || !time_wait_deadline_) {
    return std::nullopt;
  }
  // What our next ACK would carry: the sender's SND.NXT and TSval clock, the
  // receiver's RCV.NXT, window and TS.Recent.
  TimeWait tw;
  tw.expires = *time_wait_deadline_;
  tw.snd_nxt = sender_.next_seqno();
  tw.rcv_nxt = *receiver_.ackno();
  tw.window = receiver_.window_field();
  tw.timestamps = sender_.peer_options().timestamps;
  if (tw.timestamps) {
    tw.ts_recent = receiver_.ts_recent().value_or(0);
    tw.ts_offset = sender_.timestamp_offset();
  }
  return tw;
}

// ---------------------------------------------------------------------------
// SEGMENT ARRIVES (RFC 9293 §3.10.7)

void TcpConnection::receive(const TcpSegment& segment, Instant now) {
  ++stats_.segments_in;
  stats_.bytes_in += segment.payload.size();
  switch (state_) {
    case TcpState::Closed:
      on_closed_segment(segment);
      return;
    case TcpState::Listen:
      on_listen(segment, now);
      return;
    case TcpState::SynSent:
      on_syn_sent(segment, now);
      return;
    default:
      on_synchronized(segment, now);
      return;
  }
}

void TcpConnection::on_closed_segment(const TcpSegment& segment) {
  // RFC 9293 §3.10.7.1: anything but a RST is answered with a RST.
  drop(ConnectionDrop::Closed);
  if (!segment.rst) {
    send_reset_for(segment);
  }
}

void TcpConnection::on_listen(const TcpSegment& segment, Instant now) {
  // RFC 9293 §3.10.7.2.
  if (segment.rst) {
    drop(ConnectionDrop::ListenRst);
    return;
  }
  if (segment.ack) {
    drop(ConnectionDrop::ListenAck);
    send_reset_for(segment);
    return;
  }
  if (!segment.syn) {
    drop(ConnectionDrop::ListenNotSyn);
    return;
  }
  negotiate(segment);
  receiver_.on_syn(segment, now);
  sender_.set_passive_open();
  state_ = TcpState::SynReceived;
  // Data on the SYN is queued (RFC 9293 §3.10.7.2: "queued for processing later").
  receiver_.receive(segment, now);
  push(now);  // the sender's SYN, completed into our SYN-ACK
}

void TcpConnection::on_syn_sent(const TcpSegment& segment, Instant now) {
  // RFC 9293 §3.10.7.3.
  const Wrap32 iss = sender_.isn();
  const Wrap32 snd_nxt = sender_.next_seqno();
  const bool ack_acceptable =
      segment.ack && seq_gt(segment.ackno, iss) && seq_le(segment.ackno, snd_nxt);
  if (segment.ack && !ack_acceptable) {
    drop(ConnectionDrop::SynSentBadAck);
    if (!segment.rst) {
      send_reset_for(segment);
    }
    return;
  }
  if (segment.rst) {
    if (!ack_acceptable) {
      drop(ConnectionDrop::SynSentRstNoAck);
      return;
    }
    close(CloseReason::Refused);
    return;
  }
  if (!segment.syn) {
    drop(ConnectionDrop::SynSentNoSyn);
    return;
  }
  negotiate(segment);
  receiver_.on_syn(segment, now);
  if (ack_acceptable) {
    sender_.receive(segment, now);
    state_ = TcpState::Established;
    receiver_.receive(segment, now);
    if (receiver_.fin_received()) {
      state_ = TcpState::CloseWait;
    }
    receiver_.request_ack();
    push(now);
    flush_ack(now);
    return;
  }
  // Simultaneous open: SYN-RECEIVED, <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK>.
  state_ = TcpState::SynReceived;
  receiver_.receive(segment, now);
  send_syn_ack(now);
}

void TcpConnection::on_synchronized(const TcpSegment& segment, Instant now) {
  // RFC 9293 §3.10.7.4 second check with RFC 5961 §3.2: a RST resets only at
  // exactly RCV.NXT; elsewhere in the window it earns a challenge ACK.
  if (segment.rst) {
    const Wrap32 rcv_nxt = *receiver_.ackno();
    if (segment.seqno == rcv_nxt) {
      close(CloseReason::ResetByPeer);
    } else if (receiver_.in_window(segment.seqno, 1) || receiver_.in_window(segment.seqno, 0)) {
      challenge_ack(now, ConnectionDrop::RstInWindow);
    } else {
      drop(ConnectionDrop::RstOutOfWindow);
    }
    return;
  }

  // A retransmitted SYN while our SYN-ACK is unacknowledged: the SYN-ACK was
  // lost, so send it again now rather than at our retransmission timeout.
  if (state_ == TcpState::SynReceived && segment.syn && !segment.ack &&
      segment.seqno == *receiver_.irs()) {
    if (may_answer_invalid(segment, now)) {
      send_syn_ack(now);
    }
    return;
  }

  // First check: PAWS and sequence acceptability; failures are answered with
  // an ACK (counted by the receiver).
  if (const auto refused = receiver_.check(segment, now)) {
    // RFC 9293 §3.10.7.4: "If the RCV.WND is zero, no segments will be
    // acceptable, but special allowance should be made to accept valid ACKs".
    if (*refused == ReceiverDrop::OutOfWindow && segment.ack && !segment.syn &&
        segment.seqno == *receiver_.ackno() && receiver_.window_bytes() == 0) {
      process_ack(segment, now);
    }
    if (state_ == TcpState::TimeWait && segment.fin) {
      enter_time_wait(now);  // RFC 9293 §3.10.7.4: restart the 2 MSL timeout
    }
    if (!may_answer_invalid(segment, now)) {
      receiver_.withdraw_ack_request();
    }
    flush_ack(now);
    return;
  }

  // Fourth check, RFC 5961 §4: a SYN in a synchronized state is challenged.
  if (segment.syn) {
    challenge_ack(now, ConnectionDrop::SynSynchronized);
    return;
  }
  // Fifth check: the ACK field.
  if (!segment.ack) {
    drop(ConnectionDrop::NoAck);
    return;
  }
  if (!process_ack(segment, now)) {
    return;
  }
  if (state_ == TcpState::Closed) {
    return;
  }
  process_text_and_fin(segment, now);
  if (state_ == TcpState::Closed) {
    return;
  }
  push(now);
  flush_ack(now);
}

bool TcpConnection::process_ack(const TcpSegment& segment, Instant now) {
  if (state_ == TcpState::SynReceived) {
    // RFC 9293 §3.10.7.4: SND.UNA < SEG.ACK =< SND.NXT enters ESTABLISHED;
    // otherwise <SEQ=SEG.ACK><CTL=RST>.
    if (!seq_gt(segment.ackno, sender_.oldest_unacked()) ||
        seq_gt(segment.ackno, sender_.next_seqno())) {
      drop(ConnectionDrop::SynReceivedBadAck);
      send_reset_for(segment);
      return false;
    }
    sender_.receive(segment, now);
    // A CLOSE in SYN-RECEIVED already moved us to FIN-WAIT-1.
    state_ = outbound().is_closed() ? TcpState::FinWait1 : TcpState::Established;
  } else {
    switch (sender_.receive(segment, now)) {
      case AckResult::Unsent:
        // RFC 9293 §3.10.7.4 / RFC 5961 §5.2: ACK, drop.
        drop(ConnectionDrop::AckUnsent);
        if (may_answer_invalid(segment, now)) {
          receiver_.request_ack();
          flush_ack(now);
        }
        return false;
      case AckResult::TooOld:
        drop(ConnectionDrop::AckTooOld);
        if (may_answer_invalid(segment, now)) {
          receiver_.request_ack();
          flush_ack(now);
        }
        return false;
      default:
        break;
    }
  }
  if (sender_.fin_acked()) {
    switch (state_) {
      case TcpState::FinWait1:
        state_ = TcpState::FinWait2;
        if (orphaned_) {
          fin_wait2_deadline_ = now + config_.fin_wait2_timeout;
        }
        break;
      case TcpState::Closing:
        enter_time_wait(now);
        break;
      case TcpState::LastAck:
        close(CloseReason::Normal);
        break;
      default:
        break;
    }
  }
  return true;
}

void TcpConnection::process_text_and_fin(const TcpSegment& segment, Instant now) {
  // Seventh and eighth checks: text only while the peer may still send
  // (ESTABLISHED, FIN-WAIT-1, FIN-WAIT-2); after its FIN a segment can only
  // be a retransmission, which the acceptability test has already answered.
  if (state_ != TcpState::Established && state_ != TcpState::FinWait1 &&
      state_ != TcpState::FinWait2) {
    if (segment.fin || !segment.payload.empty()) {
      receiver_.request_ack();
    }
    if (state_ == TcpState::TimeWait && segment.fin) {
      enter_time_wait(now);
    }
    return;
  }
  const bool had_fin = receiver_.fin_received();
  receiver_.receive(segment, now);
  if (had_fin || !receiver_.fin_received()) {
    return;
  }
  switch (state_) {
    case TcpState::Established:
      state_ = TcpState::CloseWait;
      break;
    case TcpState::FinWait1:
      // Our FIN acknowledged already: TIME-WAIT; otherwise CLOSING.
      if (sender_.fin_acked()) {
        enter_time_wait(now);
      } else {
        state_ = TcpState::Closing;
      }
      break;
    case TcpState::FinWait2:
      enter_time_wait(now);
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------------------------
// Timers

void TcpConnection::tick(Instant now) {
  if (state_ == TcpState::Closed || state_ == TcpState::Listen) {
    return;
  }
  if (state_ == TcpState::TimeWait) {
    if (time_wait_deadline_ && now >= *time_wait_deadline_) {
      close(CloseReason::Normal);
      return;
    }
    flush_ack(now);
    return;
  }
  if (state_ == TcpState::FinWait2 && fin_wait2_deadline_ && now >= *fin_wait2_deadline_) {
    // Linux's tcp_fin_timeout: an orphan whose peer never sends its FIN is
    // reset, not kept.
    send_reset();
    close(CloseReason::FinWait2Timeout);
    return;
  }
  sender_.set_sack_option_bytes(static_cast<uint32_t>(receiver_.sack_option_bytes()));
  sender_.tick(now, [this](const TcpSegment& s) { complete_and_emit(s); });
  if (const auto failure = sender_.failure()) {
    close(close_reason_for(*failure));  // RFC 9293 §3.8.3: give up, report, enter CLOSED
    return;
  }
  push(now);
  flush_ack(now);
}

std::optional<Instant> TcpConnection::next_deadline() const {
  if (state_ == TcpState::Closed || state_ == TcpState::Listen) {
    return std::nullopt;
  }
  if (state_ == TcpState::TimeWait) {
    return time_wait_deadline_;
  }
  if (synchronized() && receiver_.ack_due_now()) {
    // E.g. the application read and the window opened: tick() at once. Any
    // past instant will do; the origin is the earliest there is.
    return Instant{};
  }
  std::optional<Instant> next = sender_.next_deadline();
  if (const auto ack = receiver_.next_deadline(); ack && (!next || *ack < *next)) {
    next = ack;
  }
  if (state_ == TcpState::FinWait2 && fin_wait2_deadline_ &&
      (!next || *fin_wait2_deadline_ < *next)) {
    next = fin_wait2_deadline_;
  }
  return next;
}

void TcpConnection::enter_time_wait(Instant now) {
  state_ = TcpState::TimeWait;
  time_wait_deadline_ = now + 2 * config_.msl;  // RFC 9293 §3.4.2
}

void TcpConnection::close(CloseReason reason) {
  SPDLOG_DEBUG("connection closed in {}: {}", to_string(state_), to_string(reason));
  if (reason != CloseReason::Normal) {
    inbound().set_error();
    outbound().set_error();
  }
  state_ = TcpState::Closed;
  close_reason_ = reason;
  time_wait_deadline_.reset();
  fin_wait2_deadline_.reset();
}

// ---------------------------------------------------------------------------
// Output

void TcpConnection::negotiate(const TcpSegment& syn) {
  const NegotiatedOptions agreed = options_.on_peer_syn(syn, config_);
  sender_.set_peer_options(agreed.peer);
  receiver_.set_window_scaling(agreed.window_scaling);
  receiver_.set_sack(agreed.sack);
  receiver_.set_timestamps(agreed.timestamps);
}

void TcpConnection::push(Instant now) {
  switch (state_) {
    case TcpState::SynSent:
    case TcpState::SynReceived:
    case TcpState::Established:
    case TcpState::CloseWait:
    case TcpState::FinWait1:
    case TcpState::LastAck:
    case TcpState::Closing:
      break;
    default:
      return;
  }
  sender_.set_sack_option_bytes(static_cast<uint32_t>(receiver_.sack_option_bytes()));
  sender_.push(now, [this](const TcpSegment& s) { complete_and_emit(s); });
}

void TcpConnection::flush_ack(Instant now) {
  if (acks_held_ && !receiver_.ack_urgent()) {
    return;  // release_acks() sends it
  }
  if (synchronized() && receiver_.ack_due(now)) {
    send_ack(now);
  }
}

void TcpConnection::send_ack(Instant now) {
  TcpSegment ack = sender_.make_empty_segment(now);
  complete(ack);
  emit(ack);
}

void TcpConnection::send_syn_ack(Instant now) {
  // Our SYN again, with the ACK of theirs. The sender keeps retransmitting
  // its own copy on its timer.
  TcpSegment syn;
  syn.seqno = sender_.isn();
  syn.syn = true;
  OptionNegotiation::offer(syn.options, config_, sender_.timestamp_value(now));
  complete(syn);
  emit(syn);
}

void TcpConnection::challenge_ack(Instant now, ConnectionDrop why) {
  drop(why);
  // RFC 5961 §7: at most challenge_ack_limit_per_second.
  if (!replies_.allow_challenge_ack(now, config_.challenge_ack_limit_per_second)) {
    drop(ConnectionDrop::ChallengeAckRateLimited);
    return;
  }
  ++stats_.challenge_acks;
  send_ack(now);
}

bool TcpConnection::may_answer_invalid(const TcpSegment& segment, Instant now) {
  if (!replies_.allow_invalid_reply(segment, now, config_.invalid_reply_interval)) {
    drop(ConnectionDrop::InvalidReplyRateLimited);
    return false;
  }
  return true;
}

void TcpConnection::send_reset() {
  // <SEQ=SND.NXT><CTL=RST>
  TcpSegment rst = sender_.make_empty_segment();
  rst.rst = true;
  emit(rst);
}

void TcpConnection::send_reset_for(const TcpSegment& segment) {
  // RFC 9293 §3.10.7.1: <SEQ=SEG.ACK><CTL=RST> if the ACK bit is on, else
  // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
  TcpSegment rst;
  rst.rst = true;
  if (segment.ack) {
    rst.seqno = segment.ackno;
  } else {
    rst.ack = true;
    rst.ackno = segment.seqno + static_cast<uint32_t>(segment.sequence_length());
  }
  emit(rst);
}

void TcpConnection::complete(TcpSegment& segment) {
  if (segment.syn) {
    options_.complete_syn(segment, config_, receiver_.announced_window_shift());
  }
  receiver_.fill(segment);
  if (!segment.syn) {
    // A segment sized before the receiver held more SACK blocks (a
    // retransmission) keeps within the MSS by carrying fewer: never a
    // datagram the path cannot take (RFC 6691).
    stats_.sack_blocks_trimmed += trim_sack_blocks(segment, sender_.segment_room());
  }
}

void TcpConnection::complete_and_emit(const TcpSegment& segment) {
  TcpSegment copy = segment;
  complete(copy);
  emit(copy);
}

void TcpConnection::emit(const TcpSegment& segment) {
  ++stats_.segments_out;
  stats_.bytes_out += segment.payload.size();
  if (segment.rst) {
    ++stats_.resets_out;
  } else if (segment.payload.empty() && !segment.syn && !segment.fin) {
    ++stats_.acks_out;
  }
  transmit_(segment);
}

void TcpConnection::drop(ConnectionDrop why) {
  stats_.drops.count(why);
  SPDLOG_DEBUG("drop segment in {}: {}", to_string(state_), to_string(why));
}

ConnectionSummary TcpConnection::summary() const {
  return summarize(stats_, sender_, receiver_);
}

}  // namespace tinytcp::tcp

#pragma once

// TcpConnection: one TCP endpoint, the RFC 9293 §3.3.2 state machine over a
// TcpSender (what we send) and a TcpReceiver (what we receive). It implements
// the event processing of RFC 9293 §3.10: OPEN (active and passive, and
// simultaneous open), SEGMENT ARRIVES in every state, CLOSE (half-close in
// either order), ABORT, and the timeouts, with the RFC 5961 defences against
// blind RST, SYN and ACK injection, and the option negotiation of RFC 7323
// (window scale, timestamps) and RFC 2018 (SACK-permitted) on the SYNs.
//
// Sans-I/O: segments come in through receive(), time through `now`, and every
// segment we send leaves through the Transmit callback given at construction.
// The application writes to outbound() and reads from inbound(), then calls
// tick(now) so the connection can send data or a window update; the event
// loop calls tick() again at next_deadline(). It knows nothing of addresses,
// ports or bytes on the wire: stack/ demultiplexes and encodes.

#include <cstdint>
#include <functional>
#include <optional>

#include "stream/byte_stream.hh"
#include "tcp/connection_stats.hh"
#include "tcp/option_negotiation.hh"
#include "tcp/reply_rate_limiter.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_receiver.hh"
#include "tcp/tcp_segment.hh"
#include "tcp/tcp_sender.hh"
#include "tcp/tcp_state.hh"
#include "tcp/time_wait.hh"
#include "util/counters.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class TcpConnection {
 public:
  using Transmit = std::function<void(const TcpSegment&)>;

  // A connection in CLOSED; connect() or listen() opens it. `ts_offset`: see
  // TcpSender (the Host passes IsnGenerator::timestamp_offset).
  TcpConnection(const TcpConfig& config, Wrap32 isn, Transmit transmit,
                std::optional<uint32_t> ts_offset = std::nullopt);

  // Active open (RFC 9293 §3.10.1): sends the SYN, enters SYN-SENT.
  void connect(Instant now);
  // Passive open: LISTEN for one SYN.
  void listen();
  // Passive open that a SYN cookie answered (SynCookies): straight from
  // CLOSED to SYN-RECEIVED as if `syn` (rebuilt from the cookie) had
  // arrived and our SYN-ACK with this connection's ISN had been sent. The
  // ACK that carried the cookie is then handed to receive().
  void open_from_cookie(const TcpSegment& syn, Instant now);

  // SEGMENT ARRIVES (RFC 9293 §3.10.7).
  void receive(const TcpSegment& segment, Instant now);
  // Timers (retransmission, delayed ACK, TIME-WAIT), then sends what the
  // application wrote and any ACK or window update due.
  void tick(Instant now);
  // When tick() is next needed. After the application reads enough to open
  // the window, this is in the past (Instant{}): tick() at once.
  std::optional<Instant> next_deadline() const;

  // The application's two streams.
  stream::ByteStream& inbound() { return receiver_.inbound(); }
  const stream::ByteStream& inbound() const { return receiver_.inbound(); }
  stream::ByteStream& outbound() { return sender_.outbound(); }
  const stream::ByteStream& outbound() const { return sender_.outbound(); }
  // What the application should write now (TcpSender::writable_bytes).
  uint64_t writable_bytes() const { return sender_.writable_bytes(); }

  // A batch of received segments (one read of a device's queue): until
  // release_acks(), a pure ACK that only acknowledges in-order data or opens
  // the window waits, so the batch gets one ACK where every second segment
  // would get one that the next supersedes (Linux acknowledges a GRO batch
  // once). Urgent ACKs (TcpReceiver::ack_urgent: out of order, duplicate,
  // FIN) and data segments, which carry the ACK, still leave at once.
  void hold_acks() { acks_held_ = true; }
  bool acks_held() const { return acks_held_; }
  // Ends hold_acks() and sends the ACK due, if any.
  void release_acks(Instant now) {
    acks_held_ = false;
    flush_ack(now);
  }

  // CLOSE (RFC 9293 §3.10.4): no more data from us; the FIN follows the data.
  void shutdown_write(Instant now);
  // ABORT (RFC 9293 §3.10.5): RST to the peer in a synchronized state, CLOSED.
  void abort(Instant now);
  // The application closed its socket and will never read or write again:
  // FIN-WAIT-2 times out (TcpConfig::fin_wait2_timeout) and retransmissions
  // and zero-window probes give up sooner (max_orphan_retransmissions).
  void orphan(Instant now);
  bool orphaned() const { return orphaned_; }

  // ICMP fragmentation-needed (RFC 1191) quoting our segment with sequence
  // number `quoted_seq`: believed only when that is in flight (RFC 5927
  // §4.1); then the MSS follows `mtu` and what no longer fits goes again.
  // False when the quote is not about data in flight (the caller counts it).
  bool on_path_mtu(uint32_t mtu, Wrap32 quoted_seq, Instant now);
  // The device would not take our segment starting at `seqno` (ENOBUFS,
  // EAGAIN): TcpSender::on_send_failed.
  bool on_send_failed(Wrap32 seqno, Instant now);

  // In TIME-WAIT: the little the connection still needs (tcp::TimeWait), so
  // the caller can keep that instead of the connection.
  std::optional<TimeWait> time_wait() const;

  TcpState state() const { return state_; }
  // Set once CLOSED is reached after an open.
  std::optional<CloseReason> close_reason() const { return close_reason_; }
  // Both directions done, or closed: nothing more will happen.
  bool closed() const { return state_ == TcpState::Closed; }

  const ConnectionStats& stats() const { return stats_; }
  const SenderStats& sender_stats() const { return sender_.stats(); }
  const ReceiverStats& receiver_stats() const { return receiver_.stats(); }
  ConnectionSummary summary() const;
  // Called on every change of cwnd or of the RTT estimate.
  void set_trace(TcpSender::Trace trace) { sender_.set_trace(std::move(trace)); }

  const TcpSender& sender() const { return sender_; }
  const TcpReceiver& receiver() const { return receiver_; }

 private:
  bool synchronized() const;
  void on_closed_segment(const TcpSegment& segment);
  void on_listen(const TcpSegment& segment, Instant now);
  void on_syn_sent(const TcpSegment& segment, Instant now);
  void on_synchronized(const TcpSegment& segment, Instant now);
  // The ACK field in a synchronized state (RFC 9293 §3.10.7.4 fifth check);
  // false when the segment is to be dropped.
  bool process_ack(const TcpSegment& segment, Instant now);
  void process_text_and_fin(const TcpSegment& segment, Instant now);

  void negotiate(const TcpSegment& syn);
  void push(Instant now);
  void flush_ack(Instant now);
  void send_ack(Instant now);
  void send_syn_ack(Instant now);
  void challenge_ack(Instant now, ConnectionDrop why);
  // Whether `segment`, unacceptable, may be answered now (at most once per
  // TcpConfig::invalid_reply_interval when it carries no data); counts a
  // refusal.
  bool may_answer_invalid(const TcpSegment& segment, Instant now);
  void send_reset();  // at SND.NXT, for ABORT and timeouts
  void send_reset_for(const TcpSegment& segment);
  void complete(TcpSegment& segment);
  void complete_and_emit(const TcpSegment& segment);
  void emit(const TcpSegment& segment);
  void enter_time_wait(Instant now);
  void close(CloseReason reason);
  void drop(ConnectionDrop why);

  TcpConfig config_;
  Transmit transmit_;
  TcpSender sender_;
  TcpReceiver receiver_;
  TcpState state_ = TcpState::Closed;
  std::optional<CloseReason> close_reason_;

  OptionNegotiation options_;

  std::optional<Instant> time_wait_deadline_;
  bool orphaned_ = false;
  bool acks_held_ = false;  // hold_acks() until release_acks()
  std::optional<Instant> fin_wait2_deadline_;
  ReplyRateLimiter replies_;  // RFC 5961 §7

  ConnectionStats stats_;
};

}  // namespace tinytcp::tcp

#pragma once

// TcpSender: the sending half of a TCP endpoint (RFC 9293 §3.8, RFC 5681,
// RFC 6298, RFC 6675). It owns the outbound ByteStream that the application
// writes to, segments it to the peer's MSS, fills min(peer window, cwnd),
// retransmits on RTO, duplicate ACKs and SACK-detected loss, probes a zero
// window, and gives up after too many retransmissions. Congestion control is a
// pluggable CongestionControl (tcp/congestion/).
//
// It knows nothing of the receive side: TcpConnection completes every segment
// it emits with ackno, window and SACK blocks from the TcpReceiver, decides
// acceptability of incoming segments (RFC 9293 §3.10.7) and hands the sender
// the acknowledgment fields of each acceptable one.
//
// Time comes in as `now`; `next_deadline()` says when `tick()` is next needed.
//
// It owns the SendState (the send half of the TCB) and delegates: AckIntake
// reads the window, SACK blocks and RTT of each ACK; the Segmenter builds
// and sends segments (Nagle, SWS avoidance, FIN, probes, retransmissions);
// LossRecovery runs fast recovery; RackTlp (RFC 8985 RACK, tail loss and
// recovery probes) finds losses the ACKs do not show; SenderTimers keeps
// the RTO, persist and keepalive timers; PathMss the segment size; and
// RateSampler and Pacer serve rate-based congestion control. What is left
// here is the order of events: what an ACK does, what each timer does when
// it fires, and giving up.

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "stream/byte_stream.hh"
#include "tcp/ack_intake.hh"
#include "tcp/congestion/congestion_control.hh"
#include "tcp/loss_recovery.hh"
#include "tcp/option_negotiation.hh"
#include "tcp/pacer.hh"
#include "tcp/path_mss.hh"
#include "tcp/rack_tlp.hh"
#include "tcp/rate_sampler.hh"
#include "tcp/rtt_estimator.hh"
#include "tcp/sack_scoreboard.hh"
#include "tcp/segmenter.hh"
#include "tcp/send_state.hh"
#include "tcp/sender_stats.hh"
#include "tcp/sender_timers.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_segment.hh"
#include "tcp/wrap32.hh"
#include "util/counters.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class TcpSender {
 public:
  using Transmit = std::function<void(const TcpSegment&)>;
  // Called on every change of cwnd or of the RTT estimate (for plots).
  using Trace = std::function<void(Instant, const SenderState&)>;

  // `ts_offset` is added to the millisecond clock for TSval (RFC 7323 §5.4,
  // §7.1); nullopt uses the ISN (for tests only: it tells the peer our ISN's
  // hash and our uptime).
  TcpSender(const TcpConfig& config, Wrap32 isn, std::optional<uint32_t> ts_offset = std::nullopt);
  ~TcpSender();
  TcpSender(TcpSender&&) noexcept;
  TcpSender& operator=(TcpSender&&) noexcept;

  // The application writes here. Bytes stay buffered until acknowledged, so
  // available_capacity() is the free send buffer.
  stream::ByteStream& outbound();
  const stream::ByteStream& outbound() const;
  // How many more bytes the application should write now: the free send
  // buffer, or with TcpConfig::autotune_send_buffer no more than brings the
  // bytes not yet sent to max(send_buffer_floor, 2 * cwnd).
  uint64_t writable_bytes() const;

  // Once the handshake has told us the peer's options.
  void set_peer_options(const PeerOptions& options);

  // Sends what may be sent now: the SYN if not yet sent, new data within
  // min(peer window, cwnd) (Nagle permitting), FIN once outbound is closed and
  // drained into segments. Each segment has seqno, SYN/FIN, payload and, when
  // negotiated, TSval set; the caller adds the acknowledgment side.
  void push(Instant now, const Transmit& transmit);

  // Records our SYN as sent without sending it: a SYN cookie's SYN-ACK
  // went out before this connection existed. Counted as a retransmission,
  // so the handshake gives no RTT sample (RFC 6298 §3, Karn: when it was
  // sent is not known).
  void restore_syn(Instant now);
  // Our SYN answers the peer's (it is a SYN-ACK): it gives up after
  // TcpConfig::max_syn_ack_retransmissions, not max_syn_retransmissions.
  void set_passive_open() { passive_open_ = true; }
  // The application closed the connection (TcpConnection::orphan):
  // retransmissions and zero-window probes give up after
  // TcpConfig::max_orphan_retransmissions, answered probes included.
  void set_orphaned() { orphaned_ = true; }

  // The acknowledgment fields of an acceptable incoming segment: ACK flag and
  // ackno, window (raw, scaled here), SACK blocks, timestamp echo.
  AckResult receive(const TcpSegment& segment, Instant now);

  // Fires due timers: RTO (retransmit, back off), RACK reordering timer and
  // tail loss probe (RFC 8985), zero-window probe, keepalive.
  void tick(Instant now, const Transmit& transmit);
  std::optional<Instant> next_deadline() const;

  // A segment with no payload at SND.NXT (for a pure ACK or RST).
  TcpSegment make_empty_segment() const;
  // The same with TSval set when timestamps were negotiated.
  TcpSegment make_empty_segment(Instant now) const;
  // Our RFC 7323 TSval at `now` (millisecond clock with a per-connection offset).
  uint32_t timestamp_value(Instant now) const { return state_.timestamp_value(now); }
  // The TSval clock of any connection with offset `offset`.
  static uint32_t timestamp_clock(uint32_t offset, Instant now) {
    return SendState::timestamp_clock(offset, now);
  }
  uint32_t timestamp_offset() const { return state_.ts_offset; }

  Wrap32 isn() const;
  Wrap32 next_seqno() const;      // SND.NXT
  Wrap32 oldest_unacked() const;  // SND.UNA
  uint64_t sequence_numbers_in_flight() const;
  uint32_t consecutive_retransmissions() const;
  bool syn_sent() const;
  bool syn_acked() const;
  bool fin_sent() const;
  bool fin_acked() const;
  std::optional<SenderFailure> failure() const;

  const SenderStats& stats() const;
  SenderState state() const;
  void set_trace(Trace trace);

  // Payload bytes per segment: min(peer MSS, our MSS) less timestamp option
  // bytes (the SMSS of congestion control).
  uint32_t max_payload() const { return state_.smss; }
  // Option bytes the receiver's SACK blocks will add to our next segments
  // (TcpReceiver::sack_option_bytes); new segments leave room for them.
  void set_sack_option_bytes(uint32_t bytes) { state_.sack_option_bytes = bytes; }
  // Payload of a full-sized new segment now: max_payload() less the SACK
  // option bytes.
  uint32_t new_segment_payload() const;
  // Bytes for payload and options together in one segment: min(our MSS,
  // the peer's MSS) (RFC 6691).
  uint32_t segment_room() const { return path_mss_.segment_room(state_); }
  // RFC 1191: the path carries IPv4 datagrams of at most `mtu` bytes (an
  // ICMP fragmentation-needed whose quote checked out). Lowers the MSS; what
  // is in flight and no longer fits is marked lost and goes again, cut to
  // size, with no congestion response. False if nothing changed. The limit
  // is forgotten TcpConfig::path_mtu_expiry later (RFC 1191 §6.3).
  bool on_path_mtu(uint32_t mtu, Instant now);
  // RFC 5927 §4.1: `seqno` is in [SND.UNA, SND.NXT), so an ICMP error
  // quoting it is about data we have in flight.
  bool in_flight(Wrap32 seqno) const;
  // The device would not take our segment starting at `seqno` (ENOBUFS,
  // EAGAIN: the local queue is full). It is marked lost and goes again at
  // the next tick(), due at once, not when RACK or the RTO notice. Outside
  // a recovery it starts one (the window reduced once, as Linux's
  // tcp_enter_cwr on a local drop; the refused segment first). False when
  // no segment in flight starts there (a pure ACK, or already acknowledged).
  bool on_send_failed(Wrap32 seqno, Instant now);
  bool in_recovery() const { return recovery_.in_recovery(); }
  // RFC 6675 pipe: bytes presumed in the network.
  uint64_t bytes_in_flight() const;
  // TCP_NODELAY at run time.
  void set_nagle(bool on) { state_.config.nagle = on; }
  const CongestionControl& congestion_control() const { return *state_.cc; }
  // What the handshake settled (after set_peer_options's clamping).
  const PeerOptions& peer_options() const { return state_.peer; }
  // Replaces the algorithm made from TcpConfig::congestion_control (custom
  // algorithms, tests). Before the first data segment.
  void set_congestion_control(std::unique_ptr<CongestionControl> cc);
  // Set when TcpConfig::congestion_control was not understood (Reno is used).
  const std::optional<std::string>& congestion_control_error() const { return cc_error_; }

 private:
  SendPath path() { return SendPath{state_, recovery_, rate_, pacer_, timers_}; }
  void retransmit(size_t index, Instant now, const Transmit& transmit) {
    segmenter_.retransmit(path(), index, now, transmit);
  }
  bool send_retransmissions(Instant now, const Transmit& transmit) {
    return segmenter_.send_retransmissions(path(), now, transmit);
  }
  void enter_recovery(Instant now);

  void on_rto(Instant now, const Transmit& transmit);
  void on_persist(Instant now, const Transmit& transmit);
  void on_keepalive(Instant now, const Transmit& transmit);
  std::optional<Instant> keepalive_deadline() const;
  void fail(SenderFailure why);

  // Delivery-rate sampling: the application, not the network, limits.
  void check_app_limited();
  void maybe_trace(Instant now);

  SendState state_;
  AckIntake ack_intake_;
  Segmenter segmenter_;
  LossRecovery recovery_;
  SenderTimers timers_;
  RackTlp rack_tlp_;
  RateSampler rate_;
  Pacer pacer_;
  std::optional<std::string> cc_error_;

  bool syn_timed_out_ = false;
  bool passive_open_ = false;
  bool orphaned_ = false;
  PathMss path_mss_;
  std::optional<SenderFailure> failure_;
  // A segment the device refused was marked lost: send it at this tick.
  std::optional<Instant> resend_due_;

  Trace trace_;
  SenderState traced_;
};

}  // namespace tinytcp::tcp

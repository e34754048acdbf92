#pragma once

// TcpReceiver: the receiving half of a TCP endpoint. It owns the inbound
// ByteStream the application reads and the Reassembler that puts segment
// payloads in order, and produces the acknowledgment side of every segment we
// send: ackno (RCV.NXT), the advertised window (RFC 7323 §2 scaling, RFC 1122
// §4.2.3.3 silly-window avoidance, a right edge that never moves left), SACK
// blocks (RFC 2018 §4) with D-SACK reports of duplicate data (RFC 2883) and
// the timestamp echo (RFC 7323 §4.3, with PAWS §5).
// It also decides when an ACK is due: delayed ACK per RFC 1122 §4.2.3.2 and
// RFC 5681 §4.2, immediate ACKs for out-of-order data, filled gaps and FIN,
// and window updates when the application frees enough buffer. With
// TcpConfig::autotune_receive_buffer the buffer behind the window grows with
// the rate the application reads at (ReceiveBufferTuner).
//
// It does not decide what a RST, SYN or ACK means in a given state: that is
// TcpConnection's job (RFC 9293 §3.10.7). The connection calls check() first
// (PAWS and the sequence acceptability test), then receive() for acceptable
// segments, and fill() on every segment it sends.
//
// Internally sequence numbers are absolute: abs 0 is the peer's SYN (IRS),
// stream index i is abs i + 1.

#include <array>
#include <cstdint>
#include <optional>

#include "stream/byte_stream.hh"
#include "stream/reassembler.hh"
#include "tcp/receive_buffer_tuner.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_segment.hh"
#include "tcp/wrap32.hh"
#include "util/counters.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

// Why check() refused a segment. The connection answers each with an ACK
// (RFC 9293 §3.10.7.4: "send an acknowledgment ... and drop", unless RST).
enum class ReceiverDrop {
  Paws,         // RFC 7323 §5.3 R1: SEG.TSval older than TS.Recent
  OutOfWindow,  // RFC 9293 §3.10.7.4: fails the sequence acceptability test
  kCount,
};
const char* to_string(ReceiverDrop drop);

struct ReceiverStats {
  uint64_t segments_received = 0;  // acceptable segments handed to receive()
  uint64_t bytes_received = 0;     // payload bytes of those (duplicates included)
  uint64_t out_of_order_segments = 0;
  uint64_t duplicate_segments = 0;  // occupied only sequence space already received
  uint64_t acks_sent = 0;           // fill() calls once synchronized
  uint64_t dsack_blocks = 0;        // RFC 2883 D-SACK blocks put on segments
  uint64_t buffer_grows = 0;        // autotuning enlarged the receive buffer
  EnumCounters<ReceiverDrop> drops;
};

class TcpReceiver {
 public:
  // `ts_offset`: the offset of our TSval clock (TcpSender::timestamp_clock),
  // so echoes of our timestamps time the round trip for autotuning.
  explicit TcpReceiver(const TcpConfig& config, std::optional<uint32_t> ts_offset = std::nullopt);

  // The application reads here.
  stream::ByteStream& inbound() { return stream_; }
  const stream::ByteStream& inbound() const { return stream_; }

  // The window-scale shift we announce on our SYN (RFC 7323 §2.3: the
  // smallest that covers the receive buffer, at most 14), if scaling is on.
  std::optional<uint8_t> announced_window_shift() const;
  // The same for any receiver with `config` (0 without window scaling); it
  // covers the largest buffer autotuning may reach.
  static uint8_t window_shift_for(const TcpConfig& config);
  // The largest receive buffer of a receiver with `config`.
  static uint64_t max_buffer_for(const TcpConfig& config);
  // The buffer the window may use now (grows with autotuning).
  uint64_t buffer_bytes() const { return tuner_.buffer_bytes(); }
  // The receiver's round-trip estimate (autotuning), once there is a sample.
  std::optional<Duration> rtt_estimate() const { return tuner_.rtt(); }

  // The handshake's outcome: what both sides agreed to (RFC 7323 §1.3: window
  // scaling only if both sent the option; likewise SACK and timestamps).
  void set_window_scaling(bool on) { scaling_ = on; }
  void set_sack(bool on) { sack_ = on; }
  void set_timestamps(bool on) { timestamps_ = on; }

  // The peer's SYN: IRS, RCV.NXT = IRS + 1, TS.Recent. Its payload and FIN, if
  // any, are handed to receive() by the caller.
  void on_syn(const TcpSegment& syn, Instant now);
  bool syn_received() const { return irs_.has_value(); }
  std::optional<Wrap32> irs() const { return irs_; }

  // PAWS and the sequence-number acceptability test of RFC 9293 §3.10.7.4
  // (with RCV.WND = what we last advertised). Counts and returns the reason
  // for a refusal; nullopt means acceptable. RST segments skip PAWS.
  std::optional<ReceiverDrop> check(const TcpSegment& segment, Instant now);
  // The acceptability test alone (no counting), e.g. for RFC 5961 RST checks.
  bool in_window(Wrap32 seqno, uint64_t length) const;

  // An acceptable segment's text and FIN (RFC 9293 §3.10.7.4 steps 7 and 8),
  // and the TS.Recent update of RFC 7323 §4.3. Schedules the ACK.
  void receive(const TcpSegment& segment, Instant now);

  // Completes an outgoing segment with ACK, ackno, window, SACK blocks and
  // TSecr (when negotiated; TSval is the sender's). Records the advertised
  // right edge and clears any pending ACK.
  void fill(TcpSegment& segment);
  // Option bytes the SACK blocks of the next fill() take (RFC 2018 §3), so
  // the sender can leave room for them in a full-sized segment.
  size_t sack_option_bytes() const;

  // RCV.NXT on the wire, once the SYN is in.
  std::optional<Wrap32> ackno() const;
  // The window to advertise now, in bytes (before scaling).
  uint64_t window_bytes() const;
  // The window field the next fill() of a segment without SYN would carry.
  uint16_t window_field() const;
  // RFC 7323 §4.3 TS.Recent, once a timestamp was taken.
  std::optional<uint32_t> ts_recent() const {
    return ts_recent_valid_ ? std::optional<uint32_t>(ts_recent_) : std::nullopt;
  }
  // Whether the FIN has been received and everything before it assembled.
  bool fin_received() const { return stream_.is_closed(); }

  // True when an ACK should go out now: out-of-order data, a filled gap, FIN,
  // two full-sized segments, an expired delayed-ACK timer (at `now`), or a
  // window update after the application read.
  bool ack_due(Instant now) const;
  // When the delayed-ACK timer fires, if armed.
  std::optional<Instant> next_deadline() const;
  // An ACK is due whatever the time: out-of-order data, FIN, two full-sized
  // segments, a window update.
  bool ack_due_now() const { return ack_now_ || quota_ack_ || window_update_due(); }
  // An ACK that says more than that in-order data arrived or the window
  // opened: out-of-order data, a duplicate, a filled gap, a FIN, or a reply
  // asked for (request_ack). The others may wait to the end of a batch of
  // received segments (TcpConnection::hold_acks), where a later one says it all.
  bool ack_urgent() const { return ack_now_; }
  // Forces an ACK on the next ack_due() (e.g. for an unacceptable segment).
  void request_ack() { ack_now_ = true; }
  // Takes back request_ack() (the reply to a bad segment is rate limited).
  void withdraw_ack_request() {
    ack_now_ = false;
    dsack_.reset();  // RFC 2883 §4: only in the ACK the duplicate triggers
  }

  const ReceiverStats& stats() const { return stats_; }
  ReceiverStats& mutable_stats() { return stats_; }

 private:
  uint64_t first_unassembled() const { return reassembler_.first_unassembled(); }
  // Absolute RCV.NXT (SYN = 0).
  uint64_t rcv_nxt_abs() const { return first_unassembled() + 1 + (stream_.is_closed() ? 1 : 0); }
  uint64_t unwrap(Wrap32 seqno) const { return seqno.unwrap(*irs_, rcv_nxt_abs()); }
  uint8_t shift() const { return scaling_ ? announced_shift_ : 0; }
  // The right edge (stream index) the next fill() will advertise.
  uint64_t next_right_edge() const;
  bool window_update_due() const;
  void note_sack(uint64_t start);
  // Autotuning's view of a data segment and of what the application read.
  void autotune(const TcpSegment& segment, Instant now);
  // RFC 2883 §4: the next segment's first SACK block reports the duplicate
  // sequence space [left, right) (absolute) just received.
  void note_duplicate(uint64_t left, uint64_t right);
  // The duplicate part of a segment check() refused, or of an acceptable one
  // (at absolute `abs`, `length` payload bytes) before it is inserted.
  void note_refused_duplicate(const TcpSegment& segment);
  void note_received_duplicate(uint64_t abs, uint64_t length, bool fin);
  void build_sack(TcpOptions& options) const;

  TcpConfig config_;
  std::optional<uint32_t> ts_offset_;
  uint8_t announced_shift_ = 0;
  ReceiveBufferTuner tuner_;
  stream::ByteStream stream_;
  stream::Reassembler reassembler_;

  std::optional<Wrap32> irs_;
  bool scaling_ = false;
  bool sack_ = false;
  bool timestamps_ = false;

  // Window: the right edge last advertised (stream index); RFC 9293 §3.8.6.2.2
  // "the window should not be shrunk".
  uint64_t advertised_edge_ = 0;
  bool advertised_ = false;
  // The last window told was a SYN's (never scaled, at most 65535): no window
  // update for it, the peer drops what carries no SYN until it has our SYN.
  bool advertised_on_syn_ = false;

  // RFC 7323 §4.3: TS.Recent, Last.ACK.sent (absolute), and when TS.Recent was
  // set (for the 24-day idle rule of §5.5).
  uint32_t ts_recent_ = 0;
  bool ts_recent_valid_ = false;
  Instant ts_recent_time_;
  uint64_t last_ack_sent_ = 0;

  // RFC 2018 §4: the pending ranges most recently reported, newest first
  // (stream index of any byte inside each).
  std::array<uint64_t, TcpOptions::kMaxSackBlocks> recent_sack_{};
  size_t recent_sack_count_ = 0;
  // RFC 2883: the duplicate to report on the next segment (absolute [left,
  // right)), at most one, only in the ACK it triggers.
  struct Duplicate {
    uint64_t left;
    uint64_t right;
  };
  std::optional<Duplicate> dsack_;

  // Delayed ACK.
  bool ack_now_ = false;
  bool quota_ack_ = false;  // two full-sized segments (or 2 MSS) unacknowledged
  std::optional<Instant> ack_deadline_;
  uint64_t unacked_bytes_ = 0;
  uint32_t unacked_full_segments_ = 0;
  uint64_t rcv_mss_;  // largest payload seen, at most config_.mss (Linux's estimate)

  ReceiverStats stats_;
};

}  // namespace tinytcp::tcp

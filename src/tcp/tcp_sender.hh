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

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "stream/byte_stream.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_segment.hh"
#include "tcp/wrap32.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

// What the handshake settled, handed to the sender once the peer's SYN (or
// SYN-ACK) has been seen.
struct PeerOptions {
  uint16_t mss = 536;             // the peer's announced MSS (or the default)
  uint8_t send_window_shift = 0;  // shift to apply to the peer's window field
  bool sack = false;              // both sides sent SACK-permitted
  bool timestamps = false;        // both sides sent timestamps
};

// How an incoming ACK relates to what was sent (RFC 9293 §3.10.7.4, RFC 5961 §5).
enum class AckResult {
  NoAck,      // the segment carries no ACK flag
  Advanced,   // SND.UNA < SEG.ACK <= SND.NXT: new data acknowledged
  Duplicate,  // SEG.ACK == SND.UNA
  Old,        // SND.UNA - MAX.SND.WND <= SEG.ACK < SND.UNA: ignore the ACK field
  TooOld,     // below that: RFC 5961 drop (connection sends an ACK)
  Unsent,     // SEG.ACK > SND.NXT: acknowledges something not yet sent (send an ACK, drop)
};

enum class SenderFailure {
  MaxRetransmissions,  // TcpConfig::max_retransmissions consecutive retransmissions
  UserTimeout,         // data unacknowledged for TcpConfig::user_timeout
};

struct SenderStats {
  uint64_t segments_sent = 0;
  uint64_t bytes_sent = 0;  // payload bytes, retransmissions included
  uint64_t retransmitted_segments = 0;
  uint64_t retransmitted_bytes = 0;
  uint64_t fast_retransmits = 0;
  uint64_t rto_expirations = 0;
  uint64_t sack_recovered_segments = 0;  // retransmitted because SACK showed a hole
  uint64_t duplicate_acks = 0;
  uint64_t zero_window_probes = 0;
  uint64_t keepalive_probes = 0;
};

// A snapshot for traces and summaries.
struct SenderState {
  uint64_t cwnd = 0;
  uint64_t ssthresh = 0;
  uint64_t bytes_in_flight = 0;
  Duration srtt{0};
  Duration rttvar{0};
  Duration rto{0};
};

class TcpSender {
 public:
  using Transmit = std::function<void(const TcpSegment&)>;
  // Called on every change of cwnd or of the RTT estimate (for plots).
  using Trace = std::function<void(Instant, const SenderState&)>;

  TcpSender(const TcpConfig& config, Wrap32 isn);
  ~TcpSender();
  TcpSender(TcpSender&&) noexcept;
  TcpSender& operator=(TcpSender&&) noexcept;

  // The application writes here. Bytes stay buffered until acknowledged, so
  // available_capacity() is the free send buffer.
  stream::ByteStream& outbound();
  const stream::ByteStream& outbound() const;

  // Once the handshake has told us the peer's options.
  void set_peer_options(const PeerOptions& options);

  // Sends what may be sent now: the SYN if not yet sent, new data within
  // min(peer window, cwnd) (Nagle permitting), FIN once outbound is closed and
  // drained into segments. Each segment has seqno, SYN/FIN, payload and, when
  // negotiated, TSval set; the caller adds the acknowledgment side.
  void push(Instant now, const Transmit& transmit);

  // The acknowledgment fields of an acceptable incoming segment: ACK flag and
  // ackno, window (raw, scaled here), SACK blocks, timestamp echo.
  AckResult receive(const TcpSegment& segment, Instant now);

  // Fires due timers: RTO (retransmit, back off), zero-window probe, keepalive.
  void tick(Instant now, const Transmit& transmit);
  std::optional<Instant> next_deadline() const;

  // A segment with no payload at SND.NXT (for a pure ACK or RST).
  TcpSegment make_empty_segment() const;

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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinytcp::tcp

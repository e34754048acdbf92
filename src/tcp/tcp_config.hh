#pragma once

// Configuration of one TCP endpoint. Defaults follow the RFCs cited; tests and
// apps override fields. Durations at this edge are `Duration`s.

#include <cstdint>
#include <string>

#include "util/time.hh"

namespace tinytcp::tcp {

struct TcpConfig {
  // Segment sizes. `mss` is what we announce (from the interface MTU: 1460 for
  // MTU 1500); the sender uses min(peer's MSS, mss) less option bytes.
  uint16_t mss = 1460;
  uint16_t default_peer_mss = 536;  // RFC 9293 §3.7.1 when the peer sends none

  // Buffers. The receive buffer of at least 1 MiB needs window scaling.
  uint64_t receive_buffer_bytes = 1 << 20;
  uint64_t send_buffer_bytes = 1 << 20;
  // Receive buffer autotuning (Linux's dynamic right-sizing,
  // tcp_rcv_space_adjust): the window starts at receive_buffer_bytes and,
  // once per round trip measured by the receiver, grows to about twice what
  // the application read in the last round trip (more while that doubles),
  // up to receive_buffer_max_bytes. It never shrinks. The window scale on
  // our SYN covers the maximum; the stream's ring grows only as far as the
  // window fills it, so memory follows the path's needs up to the maximum.
  // Off by default: receive_buffer_bytes is then the window, as an explicit
  // SO_RCVBUF is on Linux (it turns autotuning off there), and the shift on
  // our SYN stays the one that covers it.
  bool autotune_receive_buffer = false;
  uint64_t receive_buffer_max_bytes = 16 << 20;
  // Send buffer autotuning (in the spirit of Linux's tcp_sndbuf_expand and
  // TCP_NOTSENT_LOWAT): the application may keep at most
  // max(send_buffer_floor, 2 * cwnd) bytes not yet sent in the send buffer,
  // besides what is in flight, and never more than send_buffer_bytes in all.
  // The buffer then holds about what the windows need instead of filling to
  // its capacity: a ring of a few hundred KiB on a short path stays in cache
  // and is faulted in once, where a full 8 MiB one is not.
  bool autotune_send_buffer = false;
  uint64_t send_buffer_floor = 256 * 1024;

  // Options offered on our SYN (RFC 7323, RFC 2018); the peer may accept a subset.
  bool window_scale = true;
  bool sack = true;
  bool timestamps = true;

  // Sender behaviour.
  bool nagle = true;                        // RFC 896; false is TCP_NODELAY
  uint32_t initial_window_segments = 10;    // RFC 6928
  std::string congestion_control = "reno";  // reno | newreno | cubic | bbr | fixed:N
  // RFC 5681 §4.1: after more than an RTO without sending, the window
  // restarts: halved for each RTO beyond the first, not below
  // min(initial window, cwnd), as Linux's net.ipv4.tcp_slow_start_after_idle
  // (on by default there too). Bulk senders with pauses turn it off to
  // resume at full window. Reno, NewReno and CUBIC; BBR keeps its model
  // across idle periods.
  bool slow_start_after_idle = true;

  // RFC 8985 RACK-TLP loss detection: time-based marking (lost
  // retransmissions included) and tail loss probes. Only with SACK; off, or
  // without SACK, loss detection is RFC 6675 / RFC 6582 alone.
  bool rack = true;
  // RFC 8985 §7.2 WCDelAckT: the peer's worst-case delayed ACK, added to the
  // probe timeout when one segment is in flight.
  Duration tlp_max_ack_delay = std::chrono::milliseconds(200);
  // Beyond RFC 8985: probes during loss recovery. RACK learns that a
  // retransmission was lost only when something sent after it is delivered;
  // at the tail of a transfer nothing is, and the RTO (at least rto_min, many
  // round trips) repairs it. With this on, when recovery has retransmitted
  // everything it knows to be lost and no ACK makes progress for 2 SRTT, the
  // first unacknowledged segment goes out again, and again at doubling
  // intervals until the RTO. Its ACK lets RACK mark the rest. Off by default
  // (RFC 8985 and Linux leave this to the RTO); the file apps' lossy-link
  // profile turns it on.
  bool recovery_probes = false;

  // RFC 6298 retransmission timer.
  Duration rto_initial = std::chrono::seconds(1);
  Duration rto_min = std::chrono::milliseconds(200);
  Duration rto_max = std::chrono::seconds(60);
  uint32_t max_retransmissions = 15;  // consecutive, before giving up
  // The handshake gives up sooner, as Linux does: our SYN after 6
  // retransmissions (tcp_syn_retries: connect() to a black hole fails after
  // about 127 s with the 1 s initial RTO), our SYN-ACK after 5
  // (tcp_synack_retries: about 63 s), so spoofed SYNs cannot hold a
  // listener's SYN queue for minutes.
  uint32_t max_syn_retransmissions = 6;
  uint32_t max_syn_ack_retransmissions = 5;
  // The first `linear_timeouts` consecutive timeouts keep the RTO instead of
  // doubling it (RFC 6298 §5.5 doubles from the first; Linux's thin-stream
  // tcp_thin_linear_timeouts keeps 6). On a link with heavy random loss a
  // retransmission is itself lost so often that doubling stalls the transfer
  // for minutes; the file-transfer profile uses 20.
  uint32_t linear_timeouts = 0;
  // RFC 6298 §5.7: after a SYN timed out, data starts with an RTO of at least
  // this unless the handshake gave an RTT sample. Zero: not raised (the
  // file-transfer profile, where lost SYNs are expected, not a sign of a slow
  // path).
  Duration rto_after_syn_timeout = std::chrono::seconds(3);
  // A retransmission timer of the SYN's own (or the SYN-ACK's): the first
  // retry after `syn_rto`, then doubling, never later than the RTO would
  // have retried. It leaves the RTT estimator alone, so data still starts
  // with rto_initial (or the handshake's sample). On a path slower than
  // `syn_rto` it costs a few spurious SYNs; on a lossy one a lost SYN costs
  // tens of milliseconds instead of the initial RTO. Zero: the SYN uses the
  // RTO like any segment (RFC 6298; the stack's default).
  Duration syn_rto = Duration::zero();
  Duration user_timeout{0};  // 0: none (RFC 9293 §3.8.3)

  // RFC 1122 §4.2.3.2 / RFC 5681 §4.2 delayed ACK.
  Duration delayed_ack_timeout = std::chrono::milliseconds(40);
  bool delayed_ack = true;

  // Keepalive (RFC 1122 §4.2.3.6), off by default.
  bool keepalive = false;
  Duration keepalive_idle = std::chrono::hours(2);
  Duration keepalive_interval = std::chrono::seconds(75);
  uint32_t keepalive_probes = 9;

  // TIME-WAIT lasts 2 x MSL (RFC 9293 §3.4.2); tests shorten it.
  Duration msl = std::chrono::seconds(30);
  // A connection the application closed (TcpConnection::orphan) waits at
  // most this long in FIN-WAIT-2 for the peer's FIN, then resets (Linux's
  // tcp_fin_timeout). RFC 9293 has no such timer: a peer that never closes
  // would hold the connection forever.
  Duration fin_wait2_timeout = std::chrono::seconds(60);
  // An orphaned connection gives up after this many consecutive
  // retransmissions or zero-window probes, answered or not (Linux's
  // tcp_orphan_retries, 8 when 0): a peer that keeps its window shut cannot
  // hold a closed connection open.
  uint32_t max_orphan_retransmissions = 8;

  // RFC 4821 / RFC 8899 black-hole detection: after this many consecutive
  // timeouts of a segment bigger than 1024 bytes (then 536), the MSS steps
  // down to that size, in case the path drops big datagrams without an ICMP.
  // 0: off (links where random loss times segments out, not their size).
  uint32_t black_hole_timeouts = 3;
  // RFC 1191 §6.3 / RFC 8201 §4: a lowered path MTU is tried again this long
  // after the last lowering (Linux's ip_rt_mtu_expires, 10 minutes), since
  // the path may have changed; a path still narrow lowers it again (an ICMP
  // at once, a black hole after black_hole_timeouts). 0: never raised.
  Duration path_mtu_expiry = std::chrono::minutes(10);

  // RFC 5961 §7: challenge ACKs per second at most.
  uint32_t challenge_ack_limit_per_second = 10;
  // RFC 5961 §7, Linux's tcp_invalid_ratelimit: the answer to an
  // unacceptable segment that carries no data (out of window, PAWS, an ACK
  // of unsent data, a repeated SYN) goes at most once per this interval, so
  // two confused endpoints cannot loop ACKs and spoofed segments cannot
  // make us send one each. Segments with data always get their ACK.
  Duration invalid_reply_interval = std::chrono::milliseconds(500);
};

// The algorithm for bulk file transfer (the file-transfer apps over
// tinytcp): bbr keeps its rate on links with random loss, where Reno halves
// its window at every loss. Everything else keeps TcpConfig's default, Reno.
inline constexpr const char* kFileTransferCongestionControl = "bbr";

}  // namespace tinytcp::tcp

#pragma once

// SendState: the send half of a connection's TCB, which every part of the
// TcpSender reads: the send sequence variables of RFC 9293 §3.3.1 (64-bit
// absolute, 0 is the SYN), the peer's window and options, the outbound
// stream, the scoreboard of what is in flight, the RTT estimate and the
// congestion control, and the counters. A plain struct: TcpSender owns it
// and hands it to the parts that segment, time and recover.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "stream/byte_stream.hh"
#include "tcp/congestion/congestion_control.hh"
#include "tcp/option_negotiation.hh"
#include "tcp/rtt_estimator.hh"
#include "tcp/sack_scoreboard.hh"
#include "tcp/sender_stats.hh"
#include "tcp/tcp_config.hh"
#include "tcp/wrap32.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

struct SendState {
  SendState(const TcpConfig& config_in, Wrap32 isn_in, uint32_t ts_offset_in, uint32_t smss_in)
      : config(config_in),
        isn(isn_in),
        ts_offset(ts_offset_in),
        outbound(config_in.send_buffer_bytes),
        rtt(config_in.rto_initial, config_in.rto_min, config_in.rto_max),
        smss(smss_in) {}

  TcpConfig config;
  Wrap32 isn;
  uint32_t ts_offset;  // added to the millisecond clock for TSval (RFC 7323 §5.4, §7.1)
  stream::ByteStream outbound;
  std::unique_ptr<CongestionControl> cc;
  RttEstimator rtt;
  SackScoreboard board;
  PeerOptions peer;
  uint32_t smss;                   // payload of a full segment (the SMSS of RFC 5681)
  uint32_t sack_option_bytes = 0;  // the receiver's SACK blocks on our next segments

  uint64_t snd_una = 0;
  uint64_t snd_nxt = 0;
  uint64_t wnd = 0;  // the peer's window in bytes, scaled
  uint64_t max_wnd = 0;
  bool syn_sent = false;
  bool fin_sent = false;
  // Without SACK: bytes that duplicate ACKs say have left the network
  // (LossRecovery keeps it; it comes off the pipe).
  uint64_t reno_dup_bytes = 0;
  // Where the zero-window probe of new data outstanding now starts.
  std::optional<uint64_t> probe_start;
  std::optional<Instant> unacked_since;  // for the user timeout
  std::optional<Instant> last_sent;      // last segment with sequence space (Linux's lsndtime)
  uint32_t consecutive_retransmissions = 0;
  SenderStats stats;

  bool syn_acked() const { return snd_una > 0; }
  // Sequence number of our FIN: data occupies [1, 1 + bytes_pushed).
  uint64_t fin_seqno() const { return 1 + outbound.bytes_pushed(); }
  // Bytes the application wrote that were never sent.
  uint64_t pending_bytes() const {
    const uint64_t sent_data = snd_nxt > 0 ? snd_nxt - 1 : 0;
    const uint64_t pushed = outbound.bytes_pushed();
    return pushed > sent_data ? pushed - sent_data : 0;
  }
  // The peer's window left beyond SND.NXT.
  uint64_t usable_window() const {
    const uint64_t right_edge = snd_una + wnd;
    return right_edge > snd_nxt ? right_edge - snd_nxt : 0;
  }
  // Payload of a full-sized new segment now. RFC 9293 §3.7.1 / RFC 6691:
  // the options of a segment come out of the MSS. Timestamps are in smss
  // already; the SACK blocks the receiver holds vary, so they are taken off
  // each new segment (Linux's tcp_current_mss does the same).
  uint32_t new_segment_payload() const {
    return smss > sack_option_bytes + 1 ? smss - sack_option_bytes : 1;
  }
  // RFC 6675 pipe: bytes presumed in the network.
  uint64_t bytes_in_flight() const {
    const uint64_t pipe = board.pipe();
    return pipe - std::min(pipe, reno_dup_bytes);
  }
  // CongestionControl::max_segments_in_flight() reached.
  bool segment_window_full() const {
    const auto limit = cc->max_segments_in_flight();
    if (!limit) {
      return false;
    }
    const uint64_t segments = board.pipe_segments();
    return segments - std::min(segments, reno_dup_bytes / smss) >= *limit;
  }
  // Our RFC 7323 TSval at `now`.
  uint32_t timestamp_value(Instant now) const { return timestamp_clock(ts_offset, now); }
  // The TSval clock of any connection with offset `offset`.
  static uint32_t timestamp_clock(uint32_t offset, Instant now) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.since_epoch());
    return offset + static_cast<uint32_t>(ms.count());
  }
};

}  // namespace tinytcp::tcp

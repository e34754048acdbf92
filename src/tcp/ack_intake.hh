#pragma once

// AckIntake: reads the acknowledgment fields of an acceptable segment for a
// TcpSender. It updates the peer's window from the newest segment only
// (RFC 9293 §3.10.7.4, SND.WL1/SND.WL2; window scale, RFC 7323 §2.2),
// takes the SACK blocks onto the scoreboard after checking them (RFC 2018;
// RFC 2883 D-SACK reports are counted, not used), and picks the RTT sample
// an ACK of new data gives (RFC 6298 §3 Karn, RFC 7323 §4.3 timestamps).
// Nonsense in these fields is counted in SenderStats::input_errors and
// ignored; the rest of the ACK is still used.
//
// What the ACK then means for recovery, probes and timers is the
// TcpSender's to decide.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include <spdlog/spdlog.h>

#include "tcp/sack_scoreboard.hh"
#include "tcp/send_state.hh"
#include "tcp/sender_timers.hh"
#include "tcp/tcp_segment.hh"
#include "tcp/wrap32.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class AckIntake {
 public:
  // The window of `segment` (acknowledging `ack`) if it is the newest
  // segment seen; an opened window ends the persist timer.
  void update_window(SendState& s, SenderTimers& timers, const TcpSegment& segment, uint64_t ack,
                     Instant now) {
    // RFC 9293 §3.10.7.4: window update from the newest segment only.
    const uint64_t window = uint64_t{segment.window}
                            << (segment.syn ? 0 : s.peer.send_window_shift);  // RFC 7323 §2.2
    if (window_set_ && !seq_lt(wl1_, segment.seqno) &&
        !(wl1_ == segment.seqno && seq_le(wl2_, segment.ackno))) {
      return;
    }
    if (window_set_ && ack + window < s.snd_una + s.wnd) {
      s.stats.input_errors.count(SenderInputError::WindowShrunk);
      SPDLOG_DEBUG("peer shrank its window");
    }
    s.wnd = window;
    window_set_ = true;
    wl1_ = segment.seqno;
    wl2_ = segment.ackno;
    s.max_wnd = std::max(s.max_wnd, s.wnd);
    if (s.wnd > 0) {
      timers.on_window_open(s, now);
    }
  }
  // The SACK blocks of `segment` onto the scoreboard; returns the bytes
  // newly sacked. Blocks are checked against SND.UNA before this ACK.
  static uint64_t take_sacks(SendState& s, const TcpSegment& segment, uint64_t ack) {
    return segment.options.sack_count == 0 ? 0 : take_sack_blocks(s, segment, ack);
  }
  // RFC 7323 §4.3: the RTT the timestamp echo of an ACK of new data shows
  // (at least 1 ms: the TSval clock ticks in milliseconds).
  static std::optional<Duration> timestamp_rtt(SendState& s, const TcpSegment& segment,
                                               Instant now) {
    // RFC 7323 §4.3: an ACK of new data echoes the TSval of the segment that
    // advanced the window; valid even after retransmissions.
    if (!s.peer.timestamps || !segment.options.timestamps) {
      return std::nullopt;
    }
    const auto elapsed =
        static_cast<int32_t>(s.timestamp_value(now) - segment.options.timestamps->echo_reply);
    if (elapsed < 0) {
      s.stats.input_errors.count(SenderInputError::TimestampEchoInFuture);
      SPDLOG_DEBUG("TSecr {} in the future", segment.options.timestamps->echo_reply);
      return std::nullopt;
    }
    // The TSval clock ticks in milliseconds: 0 means "under 1 ms", not an RTT
    // of zero (which would pull min RTT to 0 on sub-millisecond paths and with
    // it RACK's windows and bbr's BDP).
    return std::chrono::milliseconds(std::max<int32_t>(elapsed, 1));
  }
  // The RTT sample of an ACK of new data that removed `acked` (nullopt when
  // it is ambiguous), fed to the estimator weighted by the ACKs expected
  // per round trip with `prior_flight` in flight.
  static std::optional<Duration> rtt_sample(SendState& s, const TcpSegment& segment,
                                            const SackScoreboard::Acked& acked,
                                            std::optional<Duration> ts_rtt, uint64_t prior_flight,
                                            Instant now);

 private:
  static uint64_t take_sack_blocks(SendState& s, const TcpSegment& segment, uint64_t ack);
  // RFC 2883 §4: the first of `count` SACK blocks lies inside the second.
  static bool inside_second_block(const TcpSegment& segment, size_t count, const SackBlock& first);

  bool window_set_ = false;
  Wrap32 wl1_;  // SND.WL1, SND.WL2: the segment that last updated the window
  Wrap32 wl2_;
};

}  // namespace tinytcp::tcp

#include "tcp/ack_intake.hh"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

namespace tinytcp::tcp {

uint64_t AckIntake::take_sack_blocks(SendState& s, const TcpSegment& segment, uint64_t ack) {
  const size_t count = std::min<size_t>(segment.options.sack_count, TcpOptions::kMaxSackBlocks);
  if (count == 0) {
    return 0;
  }
  if (!s.peer.sack) {
    s.stats.input_errors.count(SenderInputError::SackNotNegotiated);
    SPDLOG_DEBUG("ignore SACK blocks: SACK not negotiated");
    return 0;
  }
  uint64_t newly_sacked = 0;
  s.board.begin_sack();
  for (size_t i = 0; i < count; ++i) {
    const SackBlock& block = segment.options.sack[i];
    const uint64_t left = block.left.unwrap(s.isn, s.snd_una);
    const uint64_t right = block.right.unwrap(s.isn, s.snd_una);
    if (left >= right) {
      s.stats.input_errors.count(SenderInputError::SackBlockInverted);
      SPDLOG_DEBUG("ignore SACK block [{}, {}): inverted", block.left, block.right);
      continue;
    }
    if (i == 0 && (right <= ack || inside_second_block(segment, count, block))) {
      // RFC 2883 §4: a first block below the cumulative ACK, or inside the
      // second block, reports a duplicate, not new data.
      ++s.stats.dsack_blocks;
      continue;
    }
    // Checked against SND.UNA before this ACK (as Linux's
    // tcp_is_sackblock_valid): a block the new cumulative ACK cuts into
    // still tells what arrived above it.
    if (left < s.snd_una || right > s.snd_nxt) {
      s.stats.input_errors.count(SenderInputError::SackBlockOutOfWindow);
      SPDLOG_DEBUG("ignore SACK block [{}, {}): outside [SND.UNA, SND.NXT]", block.left,
                   block.right);
      continue;
    }
    if (right > ack) {
      newly_sacked += s.board.sack(std::max(left, ack), right);
    }
  }
  s.board.end_sack();
  return newly_sacked;
}

bool AckIntake::inside_second_block(const TcpSegment& segment, size_t count,
                                    const SackBlock& first) {
  if (count < 2) {
    return false;
  }
  const SackBlock& second = segment.options.sack[1];
  return seq_le(second.left, first.left) && seq_le(first.right, second.right) &&
         seq_lt(second.left, second.right);
}

std::optional<Duration> AckIntake::rtt_sample(SendState& s, const TcpSegment& segment,
                                              const SackScoreboard::Acked& acked,
                                              std::optional<Duration> ts_rtt, uint64_t prior_flight,
                                              Instant now) {
  // RFC 6298 §3 (Karn): no sample from a retransmitted segment, unless the
  // timestamp echo tells which transmission was acknowledged. An echo older
  // than the last retransmission means the peer acknowledged an earlier
  // copy whose ACK was lost: the time since includes our own timeout wait,
  // not the path (one such sample after a lost SYN-ACK or ACK would inflate
  // SRTT to seconds, and the RTO with it, on exactly the lossy links that
  // need a short one).
  std::optional<Duration> sample;
  if (!acked.any_retransmitted && acked.oldest_sent) {
    sample = now - *acked.oldest_sent;
  } else if (ts_rtt && acked.newest_retransmission &&
             static_cast<int32_t>(segment.options.timestamps->echo_reply -
                                  s.timestamp_value(*acked.newest_retransmission)) < 0) {
    ++s.stats.ambiguous_rtt_samples;
  } else if (ts_rtt) {
    sample = ts_rtt;
  }
  if (sample) {
    // RFC 7323 Appendix G: every ACK is sampled, so weight each by the
    // number expected per round trip.
    const uint64_t expected = std::max<uint64_t>(1, (prior_flight + 2 * s.smss - 1) / (2 * s.smss));
    s.rtt.add_sample(*sample, static_cast<uint32_t>(std::min<uint64_t>(expected, 1u << 16)));
  }
  return sample;
}

}  // namespace tinytcp::tcp

#pragma once

// TcpSegment: the abstract TCP segment that the tcp/ layer works on. It holds
// every header field and option the stack understands, already parsed, and a
// payload view. It has no wire layout: wire/ parses and serializes the bytes,
// and stack/ converts between the two. The sender fills the sequence-side
// fields (seqno, SYN, FIN, payload), the receiver the acknowledgment side
// (ackno, window, SACK, timestamp echo); TcpConnection merges them.
//
// `payload` aliases memory owned by whoever made the segment (the send buffer,
// or the datagram being parsed): it is valid only for the duration of the call
// the segment is passed to. Keep a segment past that, and copy the payload.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "tcp/wrap32.hh"

namespace tinytcp::tcp {

// RFC 2018 SACK block: [left, right) in sequence space.
struct SackBlock {
  Wrap32 left;
  Wrap32 right;
  friend bool operator==(const SackBlock& a, const SackBlock& b) {
    return a.left == b.left && a.right == b.right;
  }
};

// RFC 7323 §3: TSval and TSecr.
struct Timestamps {
  uint32_t value = 0;
  uint32_t echo_reply = 0;
};

struct TcpOptions {
  static constexpr size_t kMaxSackBlocks = 4;  // 40 option bytes fit at most 4
  static constexpr size_t kMaxBytes = 40;      // RFC 9293 §3.1: data offset 15 words
  // RFC 7323 §3.2 and Appendix A: timestamps take 10 bytes, 12 with NOP NOP.
  static constexpr size_t kTimestampBytes = 12;

  std::optional<uint16_t> mss;          // SYN only (RFC 9293 §3.7.1)
  std::optional<uint8_t> window_scale;  // SYN only (RFC 7323 §2), shift count as sent
  bool sack_permitted = false;          // SYN only (RFC 2018 §2)
  std::optional<Timestamps> timestamps;
  std::array<SackBlock, kMaxSackBlocks> sack{};
  uint8_t sack_count = 0;
};

// Bytes `blocks` SACK blocks take on the wire: NOP NOP kind length, then 8
// bytes a block (RFC 2018 §3).
constexpr size_t sack_option_bytes(size_t blocks) {
  return blocks == 0 ? 0 : 4 + 8 * blocks;
}

// Option bytes of a segment without SYN as wire/ lays them out: timestamps
// and SACK blocks, the only options a synchronized segment carries.
inline size_t non_syn_option_bytes(const TcpOptions& options) {
  return (options.timestamps ? TcpOptions::kTimestampBytes : 0) +
         sack_option_bytes(options.sack_count);
}

struct TcpSegment {
  Wrap32 seqno;
  Wrap32 ackno;
  bool syn = false;
  bool ack = false;
  bool fin = false;
  bool rst = false;
  bool psh = false;
  bool urg = false;
  uint16_t window = 0;  // as on the wire: not yet scaled
  uint16_t urgent_pointer = 0;
  TcpOptions options;
  std::string_view payload;

  // Sequence space the segment occupies: SYN and FIN count one each.
  uint64_t sequence_length() const { return payload.size() + (syn ? 1u : 0u) + (fin ? 1u : 0u); }
};

// Leaves SACK blocks off a segment without SYN until payload and options fit
// `room` bytes (RFC 6691); returns how many it left off.
inline uint64_t trim_sack_blocks(TcpSegment& segment, size_t room) {
  uint64_t trimmed = 0;
  while (segment.options.sack_count > 0 &&
         segment.payload.size() + non_syn_option_bytes(segment.options) > room) {
    --segment.options.sack_count;
    ++trimmed;
  }
  return trimmed;
}

}  // namespace tinytcp::tcp

#pragma once

// The TCP header on the wire (RFC 9293 §3.1) with the options the stack
// understands: MSS (RFC 9293 §3.2), window scale and timestamps (RFC 7323),
// SACK-permitted and SACK (RFC 2018). parse_tcp() checks lengths, the
// pseudo-header checksum and every option (a known one of the wrong length is
// skipped, like an unknown one), and returns a plain host-order
// header plus a payload view; serialize_tcp() writes header, options and
// payload with a correct checksum. Neither throws, allocates or reads out of
// bounds. What the fields mean to a connection is for tcp/ and stack/.
//
//     0                   1                   2                   3
//     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |          Source Port          |       Destination Port        |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |                        Sequence Number                        |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |                    Acknowledgment Number                      |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |  Data |       |C|E|U|A|P|R|S|F|                               |
//    | Offset| Rsrvd |W|C|R|C|S|S|Y|I|            Window             |
//    |       |       |R|E|G|K|H|T|N|N|                               |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |           Checksum            |         Urgent Pointer        |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |                           [Options]                           |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//    |                                                               :
//    :                             Data                              :
//    :                                                               |
//    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The checksum covers this pseudo-header (RFC 9293 §3.1) and the segment:
//
//    +--------+--------+--------+--------+
//    |           Source Address          |
//    +--------+--------+--------+--------+
//    |         Destination Address       |
//    +--------+--------+--------+--------+
//    |  zero  |  PTCL  |    TCP Length   |
//    +--------+--------+--------+--------+

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/buffer.hh"
#include "util/expected.hh"

namespace tinytcp::wire {

// RFC 2018 §3: one SACK block, [left, right) in sequence space.
struct TcpSackBlock {
  uint32_t left = 0;
  uint32_t right = 0;
  friend bool operator==(const TcpSackBlock& a, const TcpSackBlock& b) {
    return a.left == b.left && a.right == b.right;
  }
};

// RFC 7323 §3.2: TSval and TSecr.
struct TcpTimestampOption {
  uint32_t value = 0;
  uint32_t echo_reply = 0;
  friend bool operator==(const TcpTimestampOption& a, const TcpTimestampOption& b) {
    return a.value == b.value && a.echo_reply == b.echo_reply;
  }
};

struct TcpHeader {
  static constexpr size_t kMinSize = 20;
  static constexpr size_t kMaxSize = 60;
  static constexpr size_t kMaxOptionBytes = kMaxSize - kMinSize;
  static constexpr size_t kMaxSackBlocks = 4;  // 2 + 4 x 8 = 34 of 40 option bytes
  static constexpr uint8_t kProtocol = 6;      // IPv4 protocol number

  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint32_t seqno = 0;
  uint32_t ackno = 0;
  bool cwr = false;
  bool ece = false;
  bool urg = false;
  bool ack = false;
  bool psh = false;
  bool rst = false;
  bool syn = false;
  bool fin = false;
  uint16_t window = 0;
  uint16_t checksum = 0;  // as parsed; serialize_tcp() computes its own
  uint16_t urgent_pointer = 0;

  // Options. Meaningful only on a SYN: mss, window_scale, sack_permitted.
  std::optional<uint16_t> mss;
  std::optional<uint8_t> window_scale;  // shift count as sent (RFC 7323 §2.3 caps it at 14)
  bool sack_permitted = false;
  std::optional<TcpTimestampOption> timestamps;
  std::array<TcpSackBlock, kMaxSackBlocks> sack{};
  uint8_t sack_count = 0;
};

struct TcpView {
  TcpHeader header;
  std::string_view payload;  // aliases the caller's buffer; copy it to keep it
};

enum class TcpError {
  Truncated,         // shorter than the fixed 20-byte header
  TooLong,           // longer than the 16-bit TCP length of the pseudo-header
  BadDataOffset,     // data offset < 5 words, or past the end of the segment
  BadChecksum,       // RFC 9293 §3.1 pseudo-header checksum does not verify
  SynFin,            // SYN and FIN together: never valid (STYLE.md)
  OptionBadLength,   // an option's length byte is 0 or 1
  OptionPastHeader,  // an option (or its length byte) runs past the data offset
  kCount,
};

const char* to_string(TcpError error);

// Parses `segment` (TCP header + payload, as carried in an IPv4 datagram from
// `src_ip` to `dst_ip`, host order) and verifies its checksum.
Expected<TcpView, TcpError> parse_tcp(std::string_view segment, uint32_t src_ip, uint32_t dst_ip);

// Bytes of options serialize_tcp() writes for `header` (a multiple of 4, at
// most 40: SACK blocks that do not fit are left out).
size_t tcp_options_size(const TcpHeader& header);
// Header size, options included.
inline size_t tcp_header_size(const TcpHeader& header) {
  return TcpHeader::kMinSize + tcp_options_size(header);
}

// Writes header, options and payload with a correct checksum (ignoring
// header.checksum). Option layout follows Linux: MSS, SACK-permitted +
// timestamps, window scale, SACK, padded with NOPs to 32-bit alignment.
// Returns false (out's sticky error) when the segment does not fit or is
// longer than 65535 bytes.
bool serialize_tcp(const TcpHeader& header, std::string_view payload, uint32_t src_ip,
                   uint32_t dst_ip, BufferWriter& out);

}  // namespace tinytcp::wire

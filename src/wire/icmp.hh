#pragma once

// ICMP for IPv4 (RFC 792), the messages the stack sends and understands: echo
// request and reply, destination unreachable (with the RFC 1191 next-hop MTU
// for "fragmentation needed") and time exceeded. The checksum covers the whole
// message (RFC 792: "the ICMP message starting with the ICMP Type").
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |     Type      |     Code      |          Checksum             |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   | echo: Identifier | Sequence   ; unreachable: unused | Next-Hop MTU
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |  echo: data ; errors: internet header + first 64 bits of data   |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Errors quote the original header and at least 8 bytes of its data
// (RFC 792); RFC 1812 §4.3.2.3 allows more, up to 576 bytes in all.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/buffer.hh"
#include "util/expected.hh"
#include "wire/ipv4.hh"

namespace tinytcp::wire {

namespace icmp {
inline constexpr uint8_t kEchoReply = 0;
inline constexpr uint8_t kDestinationUnreachable = 3;
inline constexpr uint8_t kEchoRequest = 8;
inline constexpr uint8_t kTimeExceeded = 11;

// Destination unreachable codes (RFC 792, RFC 1191 for 4).
inline constexpr uint8_t kNetUnreachable = 0;
inline constexpr uint8_t kHostUnreachable = 1;
inline constexpr uint8_t kProtocolUnreachable = 2;
inline constexpr uint8_t kPortUnreachable = 3;
inline constexpr uint8_t kFragmentationNeeded = 4;

// Time exceeded codes.
inline constexpr uint8_t kTtlExceeded = 0;
inline constexpr uint8_t kReassemblyTimeExceeded = 1;

// RFC 792: the quoted data is at least the first 64 bits of the datagram.
inline constexpr size_t kMinQuotedData = 8;
}  // namespace icmp

struct IcmpMessage {
  static constexpr size_t kHeaderSize = 8;

  uint8_t type = 0;
  uint8_t code = 0;
  uint16_t checksum = 0;  // as on the wire (parse only; serialize computes it)
  uint32_t rest = 0;      // the second word: echo id/seq, or unused + next-hop MTU
  std::string_view data;  // aliases the caller's buffer

  uint16_t echo_id() const { return static_cast<uint16_t>(rest >> 16); }
  uint16_t echo_sequence() const { return static_cast<uint16_t>(rest); }
  // RFC 1191 §4: the low 16 bits of the second word of "fragmentation needed".
  uint16_t next_hop_mtu() const { return static_cast<uint16_t>(rest); }
  bool is_error() const {
    return type == icmp::kDestinationUnreachable || type == icmp::kTimeExceeded;
  }

  static IcmpMessage echo(uint8_t type, uint16_t id, uint16_t sequence, std::string_view data) {
    return {type, 0, 0, (uint32_t{id} << 16) | sequence, data};
  }
};

enum class IcmpError {
  Truncated,  // shorter than the 8-byte header
  BadChecksum,
  kCount
};
const char* to_string(IcmpError e);

Expected<IcmpMessage, IcmpError> parse_icmp(std::string_view payload);
void serialize(const IcmpMessage& message, BufferWriter& out);

// The datagram quoted by an ICMP error: its header as it was sent (checksum
// not verified, total length not checked: the quote is truncated on purpose)
// and the first bytes of its data (ports, for TCP and UDP).
struct IcmpQuote {
  Ipv4Header header;
  std::string_view data;  // at most what was quoted
};

enum class IcmpQuoteError {
  Truncated,  // less than the quoted header plus 8 bytes of data
  BadVersion,
  BadHeaderLength,
  kCount
};
const char* to_string(IcmpQuoteError e);

Expected<IcmpQuote, IcmpQuoteError> parse_icmp_quote(std::string_view data);

}  // namespace tinytcp::wire

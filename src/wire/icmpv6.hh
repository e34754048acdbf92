#pragma once

// ICMPv6 (RFC 4443): the error messages (destination unreachable, packet too
// big, time exceeded, parameter problem) and echo request and reply. The
// checksum covers the IPv6 pseudo-header (RFC 8200 §8.1, next header 58) and
// the whole message, so parsing and serializing take the datagram's
// addresses. NDP messages (RFC 4861) are ICMPv6 too: wire/ndp.hh reads their
// bodies out of a parsed Icmpv6Message.
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |     Type      |     Code      |          Checksum             |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   | echo: Identifier | Sequence ; too big: MTU ; param problem: Pointer
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   | echo: data ; errors: as much of the invoking packet as fits in |
//   | the minimum MTU (RFC 4443 §2.4(c))                             |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/buffer.hh"
#include "util/expected.hh"
#include "wire/ipv6.hh"

namespace tinytcp::wire {

namespace icmpv6 {
inline constexpr uint8_t kDestinationUnreachable = 1;
inline constexpr uint8_t kPacketTooBig = 2;
inline constexpr uint8_t kTimeExceeded = 3;
inline constexpr uint8_t kParameterProblem = 4;
inline constexpr uint8_t kEchoRequest = 128;
inline constexpr uint8_t kEchoReply = 129;
inline constexpr uint8_t kRouterSolicitation = 133;
inline constexpr uint8_t kRouterAdvertisement = 134;
inline constexpr uint8_t kNeighborSolicitation = 135;
inline constexpr uint8_t kNeighborAdvertisement = 136;
inline constexpr uint8_t kRedirect = 137;

// Destination unreachable codes (RFC 4443 §3.1).
inline constexpr uint8_t kNoRoute = 0;
inline constexpr uint8_t kAdministrativelyProhibited = 1;
inline constexpr uint8_t kBeyondScope = 2;
inline constexpr uint8_t kAddressUnreachable = 3;
inline constexpr uint8_t kPortUnreachable = 4;

// Time exceeded codes (§3.3).
inline constexpr uint8_t kHopLimitExceeded = 0;
inline constexpr uint8_t kReassemblyTimeExceeded = 1;

// Parameter problem codes (§3.4, RFC 7112 §5 for 3).
inline constexpr uint8_t kErroneousHeaderField = 0;
inline constexpr uint8_t kUnrecognizedNextHeader = 1;
inline constexpr uint8_t kUnrecognizedOption = 2;
inline constexpr uint8_t kIncompleteHeaderChain = 3;

// §2.4(c): an error message must not exceed the minimum IPv6 MTU, so it
// quotes at most 1280 - 40 (IPv6 header) - 8 (ICMPv6 header) bytes.
inline constexpr size_t kMaxQuote = ipv6::kMinimumMtu - Ipv6Header::kSize - 8;
}  // namespace icmpv6

struct Icmpv6Message {
  static constexpr size_t kHeaderSize = 8;

  uint8_t type = 0;
  uint8_t code = 0;
  uint16_t checksum = 0;  // as on the wire (parse only; serialize computes it)
  uint32_t rest = 0;      // the second word: echo id/seq, MTU, pointer, NDP flags
  std::string_view data;  // aliases the caller's buffer

  uint16_t echo_id() const { return static_cast<uint16_t>(rest >> 16); }
  uint16_t echo_sequence() const { return static_cast<uint16_t>(rest); }
  uint32_t mtu() const { return rest; }      // packet too big
  uint32_t pointer() const { return rest; }  // parameter problem
  // §2.1: types 0-127 are errors, 128-255 informational.
  bool is_error() const { return type < 128; }

  static Icmpv6Message echo(uint8_t type, uint16_t id, uint16_t sequence, std::string_view data) {
    return {type, 0, 0, (uint32_t{id} << 16) | sequence, data};
  }
  // An error quoting `invoking`, cut to kMaxQuote bytes.
  static Icmpv6Message error(uint8_t type, uint8_t code, uint32_t rest, std::string_view invoking) {
    return {type, code, 0, rest, invoking.substr(0, icmpv6::kMaxQuote)};
  }
};

enum class Icmpv6Error {
  Truncated,  // shorter than the 8-byte header
  BadChecksum,
  kCount
};
const char* to_string(Icmpv6Error e);

// `message` is the whole upper-layer payload (after any extension headers);
// `src` and `dst` those of the datagram, for the pseudo-header.
Expected<Icmpv6Message, Icmpv6Error> parse_icmpv6(std::string_view message, const Ipv6Address& src,
                                                  const Ipv6Address& dst);
void serialize(const Icmpv6Message& message, const Ipv6Address& src, const Ipv6Address& dst,
               BufferWriter& out);

// The packet quoted by an ICMPv6 error: its fixed header as sent (payload
// length not checked: the quote may be cut), the upper-layer protocol found by
// walking the quoted extension headers, and the quoted upper-layer bytes (at
// least 8: the ports, and the TCP sequence number).
struct Icmpv6Quote {
  Ipv6Header header;
  uint8_t protocol = 0;
  std::string_view upper;  // aliases the caller's buffer
};

enum class Icmpv6QuoteError {
  Truncated,         // less than a header, its extension headers and 8 bytes
  BadVersion,        // quoted version is not 6
  BadChain,          // the quoted extension headers do not parse
  NotFirstFragment,  // the quote is of a later fragment: no upper-layer header
  kCount
};
const char* to_string(Icmpv6QuoteError e);

Expected<Icmpv6Quote, Icmpv6QuoteError> parse_icmpv6_quote(std::string_view data);

}  // namespace tinytcp::wire

#pragma once

// IPv6 header (RFC 8200 §3) and addresses (RFC 4291, text form RFC 5952).
// Parsing verifies the version and that the payload length fits the bytes
// received, and ignores bytes past it (Ethernet padding). Extension headers
// are walked by parse_ipv6_chain (wire/ipv6_chain.hh); the fixed header knows
// only the first Next Header value. Jumbograms (RFC 2675: payload length 0
// with a Jumbo Payload option) are not supported: their payload reads as
// empty and the chain walk reports it truncated. Address policy (a multicast
// source is never valid, RFC 4291 §2.7) is for the layer above, as for IPv4.
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |Version| Traffic Class |           Flow Label                  |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |         Payload Length        |  Next Header  |   Hop Limit   |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                                                               |
//   +                         Source Address (128 bits)             +
//   |                                                               |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                                                               |
//   +                      Destination Address (128 bits)           +
//   |                                                               |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The checksum of TCP, UDP and ICMPv6 over IPv6 covers the pseudo-header of
// RFC 8200 §8.1 (add_ipv6_pseudo_header), summed with the same RFC 1071 core
// (util/checksum.hh) as the IPv4 one.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "util/buffer.hh"
#include "util/checksum.hh"
#include "util/expected.hh"
#include "wire/ipv4.hh"

namespace tinytcp::wire {

// An IPv6 address, 16 bytes in network order.
struct Ipv6Address {
  // "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255" is the longest text form.
  static constexpr size_t kMaxTextSize = 45;

  std::array<uint8_t, 16> bytes{};

  // From eight 16-bit groups, as written in text: from_groups({0xfe80, 0, ..., 1}).
  static constexpr Ipv6Address from_groups(const std::array<uint16_t, 8>& groups) {
    Ipv6Address a;
    for (size_t i = 0; i < 8; ++i) {
      a.bytes[2 * i] = static_cast<uint8_t>(groups[i] >> 8);
      a.bytes[2 * i + 1] = static_cast<uint8_t>(groups[i]);
    }
    return a;
  }
  // Text of RFC 4291 §2.2: eight groups of 1-4 hex digits, at most one "::"
  // for a run of zero groups, optionally ending in a dotted quad. No zone
  // ("%eth0"), no brackets. nullopt for anything else.
  static std::optional<Ipv6Address> parse(std::string_view text);
  // RFC 5952 §4: lower case, no leading zeros, "::" for the first longest run
  // of two or more zero groups; §5: IPv4-mapped addresses end in a dotted quad.
  // Writes at most kMaxTextSize characters to `out` and returns how many.
  size_t format(char* out) const;
  std::string to_string() const;

  uint16_t group(size_t i) const {
    return static_cast<uint16_t>((bytes[2 * i] << 8) | bytes[2 * i + 1]);
  }
  bool is_unspecified() const { return *this == Ipv6Address{}; }  // ::
  bool is_loopback() const { return *this == from_groups({0, 0, 0, 0, 0, 0, 0, 1}); }
  bool is_multicast() const { return bytes[0] == 0xff; }                                // ff00::/8
  bool is_link_local() const { return bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80; }  // fe80::/10
  bool is_ipv4_mapped() const;  // ::ffff:0:0/96
  // RFC 4291 §2.7.1: ff02::1:ffXX:XXXX, the low 24 bits taken from this address.
  Ipv6Address solicited_node_multicast() const;
  bool is_solicited_node_multicast() const;
  // True when the first `length` bits (0..128) equal those of `prefix`.
  bool in_prefix(const Ipv6Address& prefix, unsigned length) const;

  friend bool operator==(const Ipv6Address& a, const Ipv6Address& b) { return a.bytes == b.bytes; }
  friend bool operator!=(const Ipv6Address& a, const Ipv6Address& b) { return a.bytes != b.bytes; }
  friend bool operator<(const Ipv6Address& a, const Ipv6Address& b) { return a.bytes < b.bytes; }
};

// Next Header values (IANA "Assigned Internet Protocol Numbers").
namespace ipv6 {
inline constexpr uint8_t kHopByHop = 0;
inline constexpr uint8_t kTcp = 6;
inline constexpr uint8_t kUdp = 17;
inline constexpr uint8_t kRouting = 43;
inline constexpr uint8_t kFragment = 44;
inline constexpr uint8_t kIcmpv6 = 58;
inline constexpr uint8_t kNoNextHeader = 59;
inline constexpr uint8_t kDestinationOptions = 60;
// RFC 8200 §5: every link carries at least 1280-byte packets.
inline constexpr size_t kMinimumMtu = 1280;
}  // namespace ipv6

struct Ipv6Header {
  static constexpr size_t kSize = 40;

  uint8_t traffic_class = 0;
  uint32_t flow_label = 0;      // 20 bits
  uint16_t payload_length = 0;  // bytes after this header, extension headers included
  uint8_t next_header = 0;
  uint8_t hop_limit = 64;
  Ipv6Address src;
  Ipv6Address dst;
};

struct Ipv6View {
  Ipv6Header header;
  std::string_view payload;  // payload_length bytes; aliases the caller's buffer
};

enum class Ipv6Error {
  Truncated,         // shorter than 40 bytes
  BadVersion,        // version is not 6
  BadPayloadLength,  // payload length past the bytes received
  kCount
};
const char* to_string(Ipv6Error e);

Expected<Ipv6View, Ipv6Error> parse_ipv6(std::string_view datagram);

// The 40-byte fixed header decoded but not validated, with its version:
// shared by parse_ipv6 and the parser of headers quoted in ICMPv6 errors.
struct Ipv6FixedHeader {
  Ipv6Header header;
  uint8_t version = 0;
};
std::optional<Ipv6FixedHeader> read_ipv6_fixed_header(std::string_view bytes);

// Writes the 40-byte header as given (payload_length included; the flow label
// is cut to 20 bits).
void serialize(const Ipv6Header& header, BufferWriter& out);

// RFC 8200 §8.1: adds source, destination, the 32-bit upper-layer packet
// length and the next header value (zero-padded to 32 bits) to `sum`. The
// length is that of the upper-layer header and data, without extension
// headers; `next_header` is the upper-layer protocol (6, 17, 58).
void add_ipv6_pseudo_header(InternetChecksum& sum, const Ipv6Address& src, const Ipv6Address& dst,
                            uint32_t upper_layer_length, uint8_t next_header);

// The checksum of an upper-layer packet whose checksum field is zero (or
// which verifies when it returns 0) under the IPv6 pseudo-header.
uint16_t ipv6_upper_layer_checksum(const Ipv6Address& src, const Ipv6Address& dst,
                                   uint8_t next_header, std::string_view packet);

}  // namespace tinytcp::wire

template <>
struct fmt::formatter<tinytcp::wire::Ipv6Address> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const tinytcp::wire::Ipv6Address& a, FormatContext& ctx) const
      -> decltype(ctx.out()) {
    std::array<char, tinytcp::wire::Ipv6Address::kMaxTextSize> text{};
    const size_t n = a.format(text.data());
    return fmt::formatter<std::string_view>::format(std::string_view(text.data(), n), ctx);
  }
};

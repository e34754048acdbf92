#pragma once

// IPv4 header (RFC 791 §3.1). Parsing verifies the version, header length,
// header checksum and total length, skips options (kept as a view, never
// interpreted) and ignores bytes past the total length (Ethernet pads short
// frames to 60 bytes). Serializing always writes a 20-byte header with a
// correct checksum. Fragments are parsed like any datagram; net/ reassembles.
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |Version|  IHL  |Type of Service|          Total Length         |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |         Identification        |Flags|      Fragment Offset    |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |  Time to Live |    Protocol   |         Header Checksum       |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                       Source Address                          |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                    Destination Address                        |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                    Options                    |    Padding    |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "util/buffer.hh"
#include "util/expected.hh"

namespace tinytcp::wire {

// An IPv4 address as a host-order integer: 10.0.0.1 is 0x0a000001.
struct Ipv4Address {
  uint32_t value = 0;

  constexpr Ipv4Address() = default;
  constexpr explicit Ipv4Address(uint32_t v) : value(v) {}
  static constexpr Ipv4Address from_octets(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return Ipv4Address{(uint32_t{a} << 24) | (uint32_t{b} << 16) | (uint32_t{c} << 8) | d};
  }
  // Dotted-quad text ("192.168.0.1"); nullopt unless exactly four decimal
  // octets of at most three digits, each <= 255.
  static std::optional<Ipv4Address> parse(std::string_view text);

  bool is_zero() const { return value == 0; }
  bool is_limited_broadcast() const { return value == 0xffffffffu; }
  bool is_multicast() const { return (value >> 28) == 0xe; }  // 224.0.0.0/4
  bool is_loopback() const { return (value >> 24) == 127; }

  friend constexpr bool operator==(Ipv4Address a, Ipv4Address b) { return a.value == b.value; }
  friend constexpr bool operator!=(Ipv4Address a, Ipv4Address b) { return a.value != b.value; }
  friend constexpr bool operator<(Ipv4Address a, Ipv4Address b) { return a.value < b.value; }
};

// The netmask of a prefix length 0..32 (0 gives 0.0.0.0).
constexpr uint32_t prefix_mask(unsigned length) {
  return length == 0 ? 0u : ~uint32_t{0} << (32 - length);
}

enum class IpProtocol : uint8_t { kIcmp = 1, kTcp = 6, kUdp = 17 };

struct Ipv4Header {
  static constexpr size_t kMinSize = 20;
  static constexpr size_t kMaxSize = 60;
  static constexpr size_t kMaxTotalLength = 65535;

  uint8_t header_length = kMinSize;  // bytes, IHL * 4 (parse only; serialize writes 20)
  uint8_t tos = 0;
  uint16_t total_length = 0;  // header + payload bytes
  uint16_t id = 0;
  bool dont_fragment = false;
  bool more_fragments = false;
  uint16_t fragment_offset = 0;  // in bytes (a multiple of 8)
  uint8_t ttl = 64;
  uint8_t protocol = 0;
  uint16_t checksum = 0;  // as on the wire (parse only; serialize computes it)
  Ipv4Address src;
  Ipv4Address dst;

  bool is_fragment() const { return more_fragments || fragment_offset != 0; }
  size_t payload_length() const { return size_t{total_length} - header_length; }
};

struct Ipv4View {
  Ipv4Header header;
  std::string_view options;  // aliases the caller's buffer; never interpreted
  std::string_view payload;  // aliases the caller's buffer; copy it to keep it
};

enum class Ipv4Error {
  Truncated,        // shorter than 20 bytes or than the header length
  BadVersion,       // version is not 4
  BadHeaderLength,  // IHL < 5
  BadTotalLength,   // total length < header length or > the bytes received
  BadChecksum,
  BadFlags,  // the reserved flag bit is set (RFC 791 §3.1: must be zero)
  kCount
};
const char* to_string(Ipv4Error e);

Expected<Ipv4View, Ipv4Error> parse_ipv4(std::string_view datagram);

// The fixed 20-byte part of an IPv4 header, decoded but not validated: the
// version, the header length in bytes (IHL x 4) and the flag bits, with the
// fields in `header` (header_length left for the caller to check and set).
// Shared by parse_ipv4 and the parser of headers quoted in ICMP errors.
struct Ipv4FixedHeader {
  Ipv4Header header;
  uint8_t version = 0;
  size_t header_length = 0;
  bool reserved_flag = false;
};
std::optional<Ipv4FixedHeader> read_ipv4_fixed_header(std::string_view bytes);

// Writes a 20-byte header (no options) with total_length, flags and a correct
// checksum taken from `header` (header_length and checksum are ignored).
void serialize(const Ipv4Header& header, BufferWriter& out);

// The RFC 1071 checksum of a 20..60-byte header whose checksum field is zero.
uint16_t ipv4_header_checksum(std::string_view header);

}  // namespace tinytcp::wire

template <>
struct fmt::formatter<tinytcp::wire::Ipv4Address> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(tinytcp::wire::Ipv4Address a, FormatContext& ctx) const -> decltype(ctx.out()) {
    return fmt::format_to(ctx.out(), "{}.{}.{}.{}", a.value >> 24, (a.value >> 16) & 0xff,
                          (a.value >> 8) & 0xff, a.value & 0xff);
  }
};

#pragma once

// Ethernet II framing (IEEE 802.3 with an EtherType, RFC 894) for the TAP
// adapter and the ARP network interface. The FCS is the NIC's business and
// never reaches us. Frames whose type field is an 802.3 length (<= 1500) are
// not Ethernet II and are rejected at parse time.
//
//   0                   6                   12      14
//  +-------------------+-------------------+-------+-----------------
//  |  destination MAC  |    source MAC     | type  |  payload ...
//  +-------------------+-------------------+-------+-----------------

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "util/buffer.hh"
#include "util/expected.hh"

namespace tinytcp::wire {

struct MacAddress {
  std::array<uint8_t, 6> bytes{};

  static constexpr MacAddress broadcast() { return {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}; }
  bool is_broadcast() const { return *this == broadcast(); }
  // Bit 0 of the first octet (IEEE 802): group address.
  bool is_multicast() const { return (bytes[0] & 1) != 0; }
  bool is_zero() const { return *this == MacAddress{}; }

  friend bool operator==(const MacAddress& a, const MacAddress& b) { return a.bytes == b.bytes; }
  friend bool operator!=(const MacAddress& a, const MacAddress& b) { return a.bytes != b.bytes; }
};

enum class EtherType : uint16_t { kIpv4 = 0x0800, kArp = 0x0806, kIpv6 = 0x86dd };

struct EthernetHeader {
  static constexpr size_t kSize = 14;

  MacAddress dst;
  MacAddress src;
  uint16_t type = 0;
};

struct EthernetView {
  EthernetHeader header;
  std::string_view payload;  // aliases the caller's buffer; may include padding
};

enum class EthernetError {
  Truncated,      // shorter than the 14-byte header
  LengthNotType,  // 802.3 length field (<= 1500) instead of an EtherType
  kCount
};
const char* to_string(EthernetError e);

Expected<EthernetView, EthernetError> parse_ethernet(std::string_view frame);

// Writes the 14-byte header; the caller writes the payload after it.
void serialize(const EthernetHeader& header, BufferWriter& out);

void read_mac(BufferReader& in, MacAddress& mac);
void write_mac(BufferWriter& out, const MacAddress& mac);

}  // namespace tinytcp::wire

template <>
struct fmt::formatter<tinytcp::wire::MacAddress> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const tinytcp::wire::MacAddress& m, FormatContext& ctx) const -> decltype(ctx.out()) {
    return fmt::format_to(ctx.out(), "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m.bytes[0],
                          m.bytes[1], m.bytes[2], m.bytes[3], m.bytes[4], m.bytes[5]);
  }
};

#pragma once

// ARP (RFC 826) for IPv4 over Ethernet: the only combination we speak, so any
// other hardware or protocol type, address length or opcode is rejected at
// parse time. Trailing bytes (Ethernet padding to 60 bytes) are ignored.
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |      Hardware type (1)        |     Protocol type (0x0800)    |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |  HLEN (6)     |  PLEN (4)     |  Opcode (1 request, 2 reply)  |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |  Sender hardware address (6) | Sender protocol address (4)    |
//   |  Target hardware address (6) | Target protocol address (4)    |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/buffer.hh"
#include "util/expected.hh"
#include "wire/ethernet.hh"
#include "wire/ipv4.hh"

namespace tinytcp::wire {

enum class ArpOpcode : uint16_t { kRequest = 1, kReply = 2 };

struct ArpMessage {
  static constexpr size_t kSize = 28;
  static constexpr uint16_t kHardwareEthernet = 1;

  ArpOpcode opcode = ArpOpcode::kRequest;
  MacAddress sender_mac;
  Ipv4Address sender_ip;
  MacAddress target_mac;
  Ipv4Address target_ip;
};

enum class ArpError {
  Truncated,
  BadHardwareType,  // not Ethernet (1)
  BadProtocolType,  // not IPv4 (0x0800)
  BadHardwareLength,
  BadProtocolLength,
  BadOpcode,  // neither request nor reply
  kCount
};
const char* to_string(ArpError e);

Expected<ArpMessage, ArpError> parse_arp(std::string_view payload);
void serialize(const ArpMessage& message, BufferWriter& out);

}  // namespace tinytcp::wire

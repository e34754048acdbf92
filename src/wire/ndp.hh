#pragma once

// Neighbor Discovery messages (RFC 4861 §4): neighbor solicitation and
// advertisement in full, router advertisement minimally (its fixed fields,
// source link-layer address, MTU and up to kMaxPrefixes prefixes; the rest is
// for a future host autoconfiguration). They are ICMPv6 messages: parse a
// datagram's ICMPv6 message first (checksum verified), then hand it here with
// the IPv6 header, which carries what §7.1 and §6.1.2 validate (hop limit 255,
// source and destination rules). Link-layer options are Ethernet ones (RFC
// 2464 §6: 8 bytes); other lengths are ignored, as are unknown options
// (§4.6: "silently ignore any options they do not recognize").
//
//   Neighbor solicitation (type 135) / advertisement (type 136):
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |     Type      |     Code      |          Checksum             |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |R|S|O|                     Reserved (NA) / Reserved (NS)       |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                       Target Address (128 bits)               |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |   Options: Type | Length (8-byte units) | data ...
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "util/buffer.hh"
#include "util/expected.hh"
#include "wire/ethernet.hh"
#include "wire/icmpv6.hh"
#include "wire/ipv6.hh"

namespace tinytcp::wire {

namespace ndp {
inline constexpr uint8_t kSourceLinkLayerAddress = 1;
inline constexpr uint8_t kTargetLinkLayerAddress = 2;
inline constexpr uint8_t kPrefixInformation = 3;
inline constexpr uint8_t kMtu = 5;
// §7.1.1: NDP messages arrive with hop limit 255, proof they were not forwarded.
inline constexpr uint8_t kHopLimit = 255;
inline constexpr size_t kMaxPrefixes = 4;
}  // namespace ndp

struct NeighborSolicitation {
  static constexpr size_t kSize = 24;  // ICMPv6 header and target, without options

  Ipv6Address target;
  std::optional<MacAddress> source_link_layer;
};

struct NeighborAdvertisement {
  static constexpr size_t kSize = 24;

  bool router = false;
  bool solicited = false;
  bool override_flag = false;
  Ipv6Address target;
  std::optional<MacAddress> target_link_layer;
};

struct NdpPrefix {
  uint8_t length = 0;
  bool on_link = false;
  bool autonomous = false;
  uint32_t valid_lifetime_s = 0;
  uint32_t preferred_lifetime_s = 0;
  Ipv6Address prefix;
};

struct RouterAdvertisement {
  static constexpr size_t kSize = 16;

  uint8_t cur_hop_limit = 0;
  bool managed = false;
  bool other = false;
  uint16_t router_lifetime_s = 0;
  uint32_t reachable_time_ms = 0;
  uint32_t retrans_timer_ms = 0;
  std::optional<MacAddress> source_link_layer;
  std::optional<uint32_t> mtu;
  std::array<NdpPrefix, ndp::kMaxPrefixes> prefixes{};
  size_t prefix_count = 0;  // prefixes past kMaxPrefixes are ignored
};

enum class NdpError {
  WrongType,             // not the ICMPv6 type of the message asked for
  BadHopLimit,           // §7.1.1: not 255
  BadCode,               // not 0
  Truncated,             // shorter than the message's fixed part
  BadOptionLength,       // an option of length 0 or past the message
  MulticastTarget,       // §7.1.1, §7.1.2
  UnspecifiedSource,     // §7.1.1: from :: to a non-solicited-node address, or with SLLA
  SolicitedToMulticast,  // §7.1.2: S set on an advertisement sent to multicast
  RouterNotLinkLocal,    // §6.1.2: an RA's source is not link-local
  kCount
};
const char* to_string(NdpError e);

Expected<NeighborSolicitation, NdpError> parse_neighbor_solicitation(const Ipv6Header& ip,
                                                                     const Icmpv6Message& m);
Expected<NeighborAdvertisement, NdpError> parse_neighbor_advertisement(const Ipv6Header& ip,
                                                                       const Icmpv6Message& m);
Expected<RouterAdvertisement, NdpError> parse_router_advertisement(const Ipv6Header& ip,
                                                                   const Icmpv6Message& m);

// Write whole ICMPv6 messages (checksum under src/dst) with the link-layer
// option when one is given. The IPv6 header around them needs hop limit 255.
void serialize(const NeighborSolicitation& ns, const Ipv6Address& src, const Ipv6Address& dst,
               BufferWriter& out);
void serialize(const NeighborAdvertisement& na, const Ipv6Address& src, const Ipv6Address& dst,
               BufferWriter& out);
// The message size serialize() writes.
size_t ndp_size(const NeighborSolicitation& ns);
size_t ndp_size(const NeighborAdvertisement& na);

// RFC 2464 §7: the Ethernet address of an IPv6 multicast address,
// 33:33 and its low 32 bits.
MacAddress ipv6_multicast_mac(const Ipv6Address& group);

}  // namespace tinytcp::wire

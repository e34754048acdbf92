#pragma once

// The address families a BasicRouteTrie (net/route_trie.hh) is built for.
// A key family names the address and route types and says how the trie reads
// an address: its top 16 bits (the direct table's index) and the 8 bits
// starting at any multiple of 8 past them (a node's slot). IPv4 reads them
// with 32-bit shifts, as the trie did before it learnt IPv6; IPv6 reads bytes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>

#include "net/route_table.hh"
#include "wire/ipv4.hh"
#include "wire/ipv6.hh"

namespace tinytcp::net {

// An IPv6 route: Route's fields for 128-bit prefixes.
struct Ipv6Route {
  wire::Ipv6Address prefix;  // host bits are zero
  uint8_t prefix_length = 0;
  // The gateway; nullopt when the destination is on the attached link.
  std::optional<wire::Ipv6Address> next_hop;
  size_t interface = 0;
};

// The IPv6 trie's base: none (the IPv4 one is the Router's RouteTable).
struct NoRouteTableBase {};

struct Ipv4TrieKey {
  using Base = RouteTable;  // the trie's add, remove, lookup and size override it
  using Address = wire::Ipv4Address;
  using Param = wire::Ipv4Address;  // passed in a register
  using Route = net::Route;
  using MapKey = uint64_t;
  using MapHash = std::hash<uint64_t>;
  static constexpr unsigned kBits = 32;

  static uint32_t top16(Param a) { return a.value >> 16; }
  // The 8 bits from bit `depth` (16 or 24).
  static uint32_t byte_at(Param a, unsigned depth) { return (a.value >> (24 - depth)) & 0xff; }
  static Address masked(Address a, unsigned length) {
    a.value &= wire::prefix_mask(length);
    return a;
  }
  static MapKey map_key(Param prefix, uint8_t length) {
    return (uint64_t{prefix.value} << 6) | length;
  }
};

struct Ipv6TrieKey {
  using Base = NoRouteTableBase;
  using Address = wire::Ipv6Address;
  using Param = const wire::Ipv6Address&;
  using Route = Ipv6Route;
  struct MapKey {
    wire::Ipv6Address prefix;
    uint8_t length = 0;
    friend bool operator==(const MapKey& a, const MapKey& b) {
      return a.length == b.length && a.prefix == b.prefix;
    }
  };
  struct MapHash {
    size_t operator()(const MapKey& k) const {
      uint64_t hi = 0;
      uint64_t lo = 0;
      std::memcpy(&hi, k.prefix.bytes.data(), 8);
      std::memcpy(&lo, k.prefix.bytes.data() + 8, 8);
      return std::hash<uint64_t>{}((hi * 0x9e3779b97f4a7c15u) ^ lo ^ (uint64_t{k.length} << 56));
    }
  };
  static constexpr unsigned kBits = 128;

  static uint32_t top16(Param a) { return (uint32_t{a.bytes[0]} << 8) | a.bytes[1]; }
  // The 8 bits from bit `depth` (a multiple of 8, 16 to 120).
  static uint32_t byte_at(Param a, unsigned depth) { return a.bytes[depth / 8]; }
  static Address masked(Address a, unsigned length) {
    for (size_t i = 0; i < a.bytes.size(); ++i) {
      const unsigned first = static_cast<unsigned>(i) * 8;
      if (length <= first) {
        a.bytes[i] = 0;
      } else if (length < first + 8) {
        a.bytes[i] &= static_cast<uint8_t>(0xffu << (first + 8 - length));
      }
    }
    return a;
  }
  static MapKey map_key(Param prefix, uint8_t length) { return MapKey{prefix, length}; }
};

}  // namespace tinytcp::net

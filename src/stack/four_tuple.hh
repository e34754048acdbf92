#pragma once

// FourTuple: the identity of a TCP connection as the Host demultiplexes it
// (RFC 9293 §3.3.2: local and remote address and port). Both addresses are
// of one family (IpAddress carries it), so IPv4 and IPv6 connections never
// share a tuple.

#include <cstddef>
#include <cstdint>
#include <functional>

#include <fmt/format.h>

#include "stack/ip_address.hh"

namespace tinytcp::stack {

struct FourTuple {
  IpAddress local_ip;
  uint16_t local_port = 0;
  IpAddress remote_ip;
  uint16_t remote_port = 0;

  IpFamily family() const { return local_ip.family(); }
  // The same connection seen from the other end.
  FourTuple reversed() const { return {remote_ip, remote_port, local_ip, local_port}; }

  friend bool operator==(const FourTuple& a, const FourTuple& b) {
    return a.local_ip == b.local_ip && a.local_port == b.local_port && a.remote_ip == b.remote_ip &&
           a.remote_port == b.remote_port;
  }
  friend bool operator!=(const FourTuple& a, const FourTuple& b) { return !(a == b); }
};

// Not keyed: the table it serves is bounded, and a peer choosing colliding
// tuples can at worst lengthen one bucket chain of its own connections.
struct FourTupleHash {
  size_t operator()(const FourTuple& t) const {
    // An IPv4 tuple hashes as it did before IPv6 (mix() is the address).
    uint64_t h = (uint64_t{t.local_ip.mix()} << 32) | t.remote_ip.mix();
    h ^= (uint64_t{t.local_port} << 16 | t.remote_port) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return static_cast<size_t>(h);
  }
};

}  // namespace tinytcp::stack

template <>
struct fmt::formatter<tinytcp::stack::FourTuple> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const tinytcp::stack::FourTuple& t, FormatContext& ctx) const -> decltype(ctx.out()) {
    return fmt::format_to(ctx.out(), "{}:{}<->{}:{}", t.local_ip, t.local_port, t.remote_ip,
                          t.remote_port);
  }
};

#pragma once

// RouteTable: the longest-prefix-match table a Router consults. Two
// implementations: RouteTrie (the one routers use) and LinearRouteTable (the
// obviously-correct reference for tests and the baseline for benchmarks).

#include <cstddef>
#include <cstdint>
#include <optional>

#include "wire/ipv4.hh"

namespace tinytcp::net {

struct Route {
  wire::Ipv4Address prefix;  // host bits are zero
  uint8_t prefix_length = 0;
  // The gateway; nullopt when the destination is on the attached link.
  std::optional<wire::Ipv4Address> next_hop;
  size_t interface = 0;
};

class RouteTable {
 public:
  virtual ~RouteTable() = default;

  // Adds the route, replacing one with the same prefix and length. Host bits
  // of `route.prefix` are cleared. False (and nothing added) if the prefix
  // length is over 32.
  virtual bool add(const Route& route) = 0;
  // Removes the route for exactly this prefix and length; false if absent.
  virtual bool remove(wire::Ipv4Address prefix, uint8_t prefix_length) = 0;
  // The route with the longest prefix that matches `dst`, or nullptr. The
  // pointer is valid until the next add() or remove().
  virtual const Route* lookup(wire::Ipv4Address dst) = 0;
  virtual size_t size() const = 0;
};

}  // namespace tinytcp::net

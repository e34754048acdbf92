#pragma once

// LinearRouteTable: a RouteTable that scans every route on each lookup. O(n),
// obviously correct: the reference the trie is checked against, and the
// baseline of the lookup benchmarks. (A hash index makes add and remove O(1)
// so that tests can build large tables; lookups never use it.)

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "net/route_table.hh"

namespace tinytcp::net {

class LinearRouteTable final : public RouteTable {
 public:
  bool add(const Route& route) override;
  bool remove(wire::Ipv4Address prefix, uint8_t prefix_length) override;
  const Route* lookup(wire::Ipv4Address dst) override;
  size_t size() const override { return routes_.size(); }

 private:
  static uint64_t key(wire::Ipv4Address prefix, uint8_t length) {
    return (uint64_t{prefix.value} << 6) | length;
  }

  std::vector<Route> routes_;
  std::unordered_map<uint64_t, size_t> index_;  // (prefix, length) -> position
};

}  // namespace tinytcp::net

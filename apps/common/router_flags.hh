#pragma once

// The command line of tinyrouter, parsed and checked before any device is
// opened (one error line for the user each):
//   --if NAME=ADDR/LEN        an interface: the TAP device NAME, our address
//                             on it and its network (a connected route)
//   --route PREFIX/LEN=GW     a route via gateway GW, which must lie on one of
//                             the connected networks; "default" is 0.0.0.0/0
//   --impair NAME:SPEC        impairment of what the router sends out of NAME
//                             (io/impairment_spec.hh: loss=30%,delay=5ms)

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/impairment.hh"
#include "net/route_table.hh"
#include "util/expected.hh"
#include "wire/ipv4.hh"

namespace tinytcp::apps {

struct InterfaceSpec {
  std::string name;
  wire::Ipv4Address address;
  uint8_t prefix_length = 0;
};

struct RouteSpec {
  wire::Ipv4Address prefix;
  uint8_t prefix_length = 0;
  wire::Ipv4Address gateway;
};

struct InterfaceImpairment {
  std::string name;
  io::ImpairmentConfig config;
  std::string spec;
};

Expected<InterfaceSpec, std::string> parse_interface_spec(std::string_view text);
Expected<RouteSpec, std::string> parse_route_spec(std::string_view text);
Expected<InterfaceImpairment, std::string> parse_interface_impairment(std::string_view text);

// The router's table: a connected route per interface (index = position in
// `interfaces`), then each static route on the interface whose network holds
// its gateway. Fails on duplicate names or addresses, overlapping connected
// networks, or a gateway on no connected network (or equal to our address).
Expected<std::vector<net::Route>, std::string> plan_routes(
    const std::vector<InterfaceSpec>& interfaces, const std::vector<RouteSpec>& routes);

}  // namespace tinytcp::apps

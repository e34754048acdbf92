#include "common/router_flags.hh"

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "io/impairment_spec.hh"

namespace tinytcp::apps {

namespace {

// Linux interface names: 1..15 bytes, no '/', ':', '=' or whitespace.
bool valid_interface_name(std::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") {
    return false;
  }
  for (const char c : name) {
    if (c == '/' || c == ':' || c == '=' || c <= ' ' || c > '~') {
      return false;
    }
  }
  return true;
}

uint32_t mask_of(uint8_t length) {
  return wire::prefix_mask(length);
}

// "A.B.C.D/LEN", LEN 0..32.
std::optional<std::pair<wire::Ipv4Address, uint8_t>> parse_prefix(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return std::nullopt;
  }
  const auto address = wire::Ipv4Address::parse(text.substr(0, slash));
  const std::string_view len_text = text.substr(slash + 1);
  unsigned len = 0;
  const auto [end, error] =
      std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
  if (!address || len_text.empty() || error != std::errc() ||
      end != len_text.data() + len_text.size() || len > 32) {
    return std::nullopt;
  }
  return std::make_pair(*address, static_cast<uint8_t>(len));
}

bool same_network(wire::Ipv4Address a, wire::Ipv4Address b, uint8_t length) {
  return ((a.value ^ b.value) & mask_of(length)) == 0;
}

}  // namespace

Expected<InterfaceSpec, std::string> parse_interface_spec(std::string_view text) {
  const size_t eq = text.find('=');
  const auto bad = [&](std::string_view why) {
    return make_unexpected(
        fmt::format("--if {}: {} (expected NAME=ADDR/LEN, e.g. tap0=10.0.0.1/24)", text, why));
  };
  if (eq == std::string_view::npos) {
    return bad("no '='");
  }
  InterfaceSpec spec;
  spec.name = std::string(text.substr(0, eq));
  if (!valid_interface_name(spec.name)) {
    return bad("not an interface name");
  }
  const auto prefix = parse_prefix(text.substr(eq + 1));
  if (!prefix) {
    return bad("not ADDR/LEN");
  }
  spec.address = prefix->first;
  spec.prefix_length = prefix->second;
  const uint32_t host = spec.address.value & ~mask_of(spec.prefix_length);
  if (spec.prefix_length < 1 || spec.prefix_length > 30 || host == 0 ||
      host == ~mask_of(spec.prefix_length)) {
    return bad("the address must be a host of a /1../30 network");
  }
  return spec;
}

Expected<RouteSpec, std::string> parse_route_spec(std::string_view text) {
  const size_t eq = text.find('=');
  const auto bad = [&](std::string_view why) {
    return make_unexpected(
        fmt::format("--route {}: {} (expected PREFIX/LEN=GATEWAY or default=GATEWAY)", text, why));
  };
  if (eq == std::string_view::npos) {
    return bad("no '='");
  }
  RouteSpec spec;
  const std::string_view prefix_text = text.substr(0, eq);
  if (prefix_text == "default") {
    spec.prefix = wire::Ipv4Address{};
    spec.prefix_length = 0;
  } else {
    const auto prefix = parse_prefix(prefix_text);
    if (!prefix) {
      return bad("not PREFIX/LEN");
    }
    if ((prefix->first.value & ~mask_of(prefix->second)) != 0) {
      return bad("host bits set in the prefix");
    }
    spec.prefix = prefix->first;
    spec.prefix_length = prefix->second;
  }
  const auto gateway = wire::Ipv4Address::parse(text.substr(eq + 1));
  if (!gateway) {
    return bad("the gateway is not an IPv4 address");
  }
  spec.gateway = *gateway;
  return spec;
}

Expected<InterfaceImpairment, std::string> parse_interface_impairment(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || !valid_interface_name(text.substr(0, colon))) {
    return make_unexpected(
        fmt::format("--impair {}: expected NAME:SPEC, e.g. tap1:loss=30%", text));
  }
  InterfaceImpairment out;
  out.name = std::string(text.substr(0, colon));
  out.spec = std::string(text.substr(colon + 1));
  auto config = io::parse_impairment(out.spec);
  if (!config) {
    return make_unexpected(fmt::format("--impair {}: {}", text, config.error()));
  }
  out.config = *config;
  return out;
}

Expected<std::vector<net::Route>, std::string> plan_routes(
    const std::vector<InterfaceSpec>& interfaces, const std::vector<RouteSpec>& routes) {
  std::vector<net::Route> table;
  for (size_t i = 0; i < interfaces.size(); ++i) {
    const InterfaceSpec& a = interfaces[i];
    for (size_t j = 0; j < i; ++j) {
      const InterfaceSpec& b = interfaces[j];
      if (a.name == b.name) {
        return make_unexpected(fmt::format("--if {}: given twice", a.name));
      }
      const uint8_t shorter = std::min(a.prefix_length, b.prefix_length);
      if (same_network(a.address, b.address, shorter)) {
        return make_unexpected(
            fmt::format("--if {} and --if {}: their networks overlap", b.name, a.name));
      }
    }
    net::Route route;
    route.prefix = wire::Ipv4Address{a.address.value & mask_of(a.prefix_length)};
    route.prefix_length = a.prefix_length;
    route.interface = i;
    table.push_back(route);
  }
  for (const RouteSpec& r : routes) {
    std::optional<size_t> via;
    for (size_t i = 0; i < interfaces.size(); ++i) {
      if (same_network(r.gateway, interfaces[i].address, interfaces[i].prefix_length)) {
        via = i;
      }
    }
    if (!via || r.gateway == interfaces[*via].address) {
      return make_unexpected(fmt::format("--route {}/{}={}: the gateway is on no --if network",
                                         r.prefix, r.prefix_length, r.gateway));
    }
    net::Route route;
    route.prefix = r.prefix;
    route.prefix_length = r.prefix_length;
    route.next_hop = r.gateway;
    route.interface = *via;
    table.push_back(route);
  }
  return table;
}

}  // namespace tinytcp::apps

#pragma once

// Ipv6Input: the IPv6 side of a Host's receive path. It takes a whole IPv6
// datagram and tells the Host what it asks for: a TCP segment to
// demultiplex, a datagram to send back (an ICMPv6 echo reply or error), a
// Packet Too Big about one of our connections, or a drop with its reason.
//
// The path: parse_ipv6; our address (or all-nodes, or our solicited-node
// group) as destination; the extension-header chain (wire::parse_ipv6_chain,
// bounded), answered with Parameter Problem on the codes
// parameter_problem_code() gives (RFC 8200 §4); fragments into the
// Ipv6Reassembler (RFC 8200 §4.5, with its Parameter Problem codes 0 and 3
// and Time Exceeded code 1 from tick()); then TCP, ICMPv6 (echo; Packet Too
// Big, RFC 8201: never below 1280; NDP left to the NetworkInterface), UDP
// (port unreachable) or Parameter Problem code 1 for any other Next Header.
// Errors go through the rate-limited net::Icmpv6Responder.
//
// It knows no connections: the Host looks up the tuple of a Packet Too Big
// and asks the connection whether the quoted sequence number is in flight,
// as for IPv4 (IcmpHandler).

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "net/icmpv6_responder.hh"
#include "net/ipv6_reassembler.hh"
#include "stack/datagram_codec.hh"
#include "stack/host_types.hh"
#include "stack/icmp_handler.hh"
#include "stack/ip_input_outcome.hh"
#include "tcp/tcp_config.hh"
#include "util/time.hh"
#include "wire/ipv6.hh"
#include "wire/ipv6_chain.hh"

namespace tinytcp::stack {

class Ipv6Input {
 public:
  struct Config {
    net::Icmpv6Responder::Config icmp;
    net::Ipv6Reassembler::Config reassembly;
    wire::Ipv6ChainLimits chain;
  };
  // What a datagram asks of the Host; `path_mtu` is a Packet Too Big, and
  // `reply` may come with a drop (a Parameter Problem for a refused packet).
  using Outcome = IpInputOutcome;
  using Emit = std::function<void(std::string_view datagram)>;

  Ipv6Input(const Config& config, const wire::Ipv6Address& address);
  // The IPv6 side of a Host with `config`, if it has an IPv6 address.
  static std::optional<Ipv6Input> from(const HostConfig& config);
  // The TcpConfig of IPv6 connections: 20 bytes less MSS than `ipv4`'s, so
  // MTU - 60 (RFC 8200 §5, RFC 9293 §3.7.1) where ipv4.mss is MTU - 40.
  static tcp::TcpConfig tcp_config(tcp::TcpConfig ipv4);

  // An IPv6 datagram (version nibble 6), `link_multicast` when it came in a
  // link-layer multicast or broadcast frame.
  Outcome receive(std::string_view datagram, Instant now, bool link_multicast = false);
  // Expires fragments; a datagram whose offset-0 fragment came is answered
  // with Time Exceeded code 1 (RFC 8200 §4.5) through `emit`.
  void tick(Instant now, const Emit& emit);
  std::optional<Instant> next_deadline() const { return reassembler_.next_deadline(); }

  const wire::Ipv6Address& address() const { return address_; }
  const net::Icmpv6ResponderStats& icmp_stats() const { return responder_.stats(); }
  const net::Ipv6Reassembler& reassembler() const { return reassembler_; }

 private:
  Outcome on_datagram(const wire::Ipv6View& ip, std::string_view bytes, Instant now,
                      bool link_multicast, bool reassembled);
  Outcome on_fragment(const wire::Ipv6View& ip, std::string_view bytes,
                      const wire::Ipv6Chain& chain, Instant now, bool link_multicast);
  Outcome on_icmpv6(const wire::Ipv6View& ip, std::string_view message);
  Outcome on_packet_too_big(const wire::Icmpv6Message& msg) const;
  // An ICMPv6 error about `ip` (bytes `bytes`), with `drop` if it is one.
  Outcome error(uint8_t type, uint8_t code, uint32_t rest, const wire::Ipv6View& ip,
                std::string_view bytes, Instant now, bool link_multicast,
                std::optional<HostDrop> drop);
  bool for_us(const wire::Ipv6Address& dst) const;

  Config config_;
  wire::Ipv6Address address_;
  wire::Ipv6Address solicited_node_;
  net::Icmpv6Responder responder_;
  net::Ipv6Reassembler reassembler_;
};

}  // namespace tinytcp::stack

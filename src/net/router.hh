#pragma once

// Router: forwards IPv4 datagrams between NetworkInterfaces by longest-prefix
// match (RFC 1812 §5.2). For each datagram that arrives on an interface it
// verifies the header, answers what is addressed to the router itself (echo
// requests; other protocols get ICMP protocol unreachable), and otherwise
// decrements the TTL, patches the checksum incrementally (RFC 1624) and sends
// the datagram out of the chosen interface to the route's next hop, or to the
// destination itself on a directly attached network. TTL expiry gets ICMP
// time exceeded, a missing route ICMP net unreachable, a datagram too big for
// the outgoing link with DF set ICMP fragmentation needed with the link MTU
// (RFC 1191); a too-big datagram without DF is fragmented (RFC 791 §3.2).
//
// The Router owns its interfaces and its table (RouteTrie unless a test gives
// another). Forwarding copies the datagram once, into the outgoing frame:
// the rewritten header is gathered with the untouched rest.
//
// Offloads (net/link_offload.hh): a frame may come with a LinkOffload (from a
// TAP device with IFF_VNET_HDR). A bad one is dropped and counted. A TCP GSO
// super-datagram is judged by its segments: headers + gso_size must fit the
// outgoing MTU (else, with DF, fragmentation needed with the MTU, as for any
// datagram); it leaves whole with its header when the outgoing interface
// offloads too, and is segmented here (TcpSegmenter, complete checksums)
// when it does not. A checksum left partial travels with the datagram to an
// offloading interface and is completed here for any other. The TTL patch
// leaves the TCP checksum's pseudo-header sum alone.

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "net/datagram_sink.hh"
#include "net/frame_sink.hh"
#include "net/icmp_responder.hh"
#include "net/ipv4_reassembler.hh"
#include "net/link_offload.hh"
#include "net/network_interface.hh"
#include "net/route_table.hh"
#include "util/counters.hh"
#include "util/time.hh"
#include "wire/ipv4.hh"

namespace tinytcp::net {

enum class RouterDrop {
  BadInterface,        // route names an interface that does not exist
  NoRoute,             // answered with ICMP net unreachable
  TtlExpired,          // answered with ICMP time exceeded
  NeedsFragmentation,  // DF set and too big: answered with fragmentation needed
  NotForwardable,      // limited broadcast, multicast, or source not unicast
  LocalIcmpIgnored,    // ICMP to us that is not an echo request
  LocalProtocol,       // another protocol to us: answered with protocol unreachable
  BadIcmp,             // malformed ICMP to us
  NoRouteForReply,     // our own ICMP could not be routed
  kCount
};
const char* to_string(RouterDrop d);

struct RouterStats {
  EnumCounters<wire::Ipv4Error> ipv4_errors;
  EnumCounters<RouterDrop> drops;
  EnumCounters<OffloadError> offload_errors;  // frames with a bad LinkOffload (dropped)
  uint64_t forwarded = 0;
  uint64_t gso_forwarded = 0;        // GSO super-datagrams sent whole, with their header
  uint64_t gso_segmented = 0;        // GSO super-datagrams segmented here
  uint64_t segments_sent = 0;        // the segments made of them
  uint64_t checksums_completed = 0;  // partial checksums completed here (no GSO)
  uint64_t fragments_sent = 0;
  uint64_t delivered_locally = 0;
  uint64_t icmp_sent = 0;
};

struct RouterConfig {
  IcmpResponder::Config icmp;
  Ipv4Reassembler::Config reassembly;
};

class Router : public DatagramSink {
 public:
  explicit Router(const RouterConfig& config = {}, std::unique_ptr<RouteTable> table = nullptr);

  // Adds an interface sending through `out`; returns its index.
  size_t add_interface(const NetworkInterfaceConfig& config, FrameSink& out);
  NetworkInterface& interface(size_t index) { return *interfaces_.at(index); }
  size_t interface_count() const { return interfaces_.size(); }

  bool add_route(const Route& route) { return table_->add(route); }
  bool remove_route(wire::Ipv4Address prefix, uint8_t length) {
    return table_->remove(prefix, length);
  }
  RouteTable& table() { return *table_; }

  // Sends each interface's gratuitous ARP.
  void start(Instant now);
  // A frame arrived on interface `index`, with the device's offload header
  // when it has one.
  void receive_frame(size_t index, std::string_view frame, Instant now,
                     const LinkOffload* offload = nullptr) {
    rx_offload_ = offload != nullptr && offload->active() ? offload : nullptr;
    interfaces_.at(index)->receive_frame(frame, now);
    rx_offload_ = nullptr;
  }
  // A datagram arrived on interface `index` (also called by the interfaces).
  void route(std::string_view datagram, size_t index, Instant now);
  // Not applied yet: RFC 1812 §5.3.4 (never forward what came as a
  // link-layer broadcast unless it is IP multicast), hence `link_multicast`
  // is not looked at.
  void on_datagram(std::string_view datagram, size_t index, Instant now,
                   bool /*link_multicast*/) override {
    route(datagram, index, now);
  }

  void tick(Instant now);
  std::optional<Instant> next_deadline() const;

  const RouterStats& stats() const { return stats_; }
  const IcmpResponder& icmp() const { return icmp_; }
  const Ipv4Reassembler& reassembler() const { return reassembler_; }

 private:
  void drop(RouterDrop why);
  bool is_local(wire::Ipv4Address a) const;
  void deliver_local(const wire::Ipv4View& ip, std::string_view bytes, Instant now);
  // Sends an ICMP error about `original` from the address of the interface
  // that leads back to its source.
  void send_icmp_error(uint8_t type, uint8_t code, uint32_t rest, const wire::Ipv4View& original,
                       std::string_view original_bytes, Instant now);
  // Routes a datagram the router made.
  void send_local(std::string_view datagram, Instant now);
  void fragment(const wire::Ipv4View& ip, uint8_t ttl, NetworkInterface& out,
                wire::Ipv4Address next_hop, Instant now);
  // The copy of `ip`'s header in head_ with `ttl` and the patched checksum.
  std::string_view rewrite_header(const wire::Ipv4View& ip, std::string_view datagram, uint8_t ttl);
  // Sends `ip` out with `ttl`: fragmentation needed, fragments or whole
  // (with `offload`, which must fit `out`, when it has one).
  void forward(const wire::Ipv4View& ip, std::string_view datagram, uint8_t ttl,
               NetworkInterface& out, wire::Ipv4Address next_hop, Instant now,
               const LinkOffload* offload);
  // The same for a datagram that came with a (checked) LinkOffload.
  void forward_offloaded(const wire::Ipv4View& ip, std::string_view datagram,
                         const LinkOffload& offload, uint8_t ttl, NetworkInterface& out,
                         wire::Ipv4Address next_hop, Instant now);

  std::unique_ptr<RouteTable> table_;
  std::vector<std::unique_ptr<NetworkInterface>> interfaces_;
  IcmpResponder icmp_;
  Ipv4Reassembler reassembler_;
  std::array<char, wire::Ipv4Header::kMaxSize> head_{};
  const LinkOffload* rx_offload_ = nullptr;  // the frame being received
  TcpSegmenter segmenter_;
  std::vector<char> scratch_;  // a datagram whose checksum is completed, or a segment
  RouterStats stats_;
};

}  // namespace tinytcp::net

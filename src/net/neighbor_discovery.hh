#pragma once

// NeighborDiscovery: the IPv6 side of a NetworkInterface on Ethernet (RFC
// 4861, RFC 2464), sans-I/O. It owns the NdpCache and builds the frames the
// cache asks for; NetworkInterface hands it every IPv6 frame that passed the
// link-layer filter and every IPv6 datagram to send.
//
// Receive: neighbor solicitations for our address are answered with a
// solicited advertisement (S and O set, our MAC in a target link-layer
// option) and teach the cache the sender's MAC (§7.2.3, §7.2.4); a
// solicitation from :: (someone's duplicate address detection) is answered to
// all-nodes with S clear. Advertisements go to the cache (§7.2.5). Router
// solicitations, advertisements and redirects are counted and ignored (a
// host, no autoconfiguration yet). NDP behind extension headers is not looked
// for: such a datagram goes up like any other, and the layer above drops it.
// Every other IPv6 datagram goes up.
//
// Send: to a multicast group, straight to its 33:33 MAC (RFC 2464 §7); to a
// unicast next hop, through the cache (which queues while it resolves).
//
// Link-layer filter: besides our MAC and broadcast the interface takes the
// all-nodes group and our solicited-node group (accepts_multicast()).
//
// ReachableTime (RFC 4861 §6.3.2) is the cache's reachable_time (the base)
// times a factor uniform in [0.5, 1.5), drawn once from the owner's seeded
// Rng when the interface is made.
//
// Duplicate address detection (RFC 4862 §5.4): when the interface starts,
// our address is tentative; dad_transmits solicitations from :: to its
// solicited-node group go out retrans_timer apart, and if no advertisement
// for it (nor a solicitation from :: for it, someone else's probe) arrived by
// retrans_timer after the last, it becomes preferred. While it is tentative
// we answer nothing for it and drop datagrams to it. A conflict makes it
// duplicate for good (counted, address_state()), and it is never used.
// With dad_transmits 0 the address is preferred at once.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "net/frame_sink.hh"
#include "net/ndp_cache.hh"
#include "util/counters.hh"
#include "util/random.hh"
#include "util/time.hh"
#include "wire/ethernet.hh"
#include "wire/icmpv6.hh"
#include "wire/ipv6.hh"
#include "wire/ndp.hh"

namespace tinytcp::net {

struct NeighborDiscoveryConfig {
  wire::MacAddress mac;
  wire::Ipv6Address ip;  // our one unicast address
  uint16_t mtu = 1500;   // at least 1280 (RFC 8200 §5)
  NdpCache::Config cache;
  // RFC 4862 §5.1 DupAddrDetectTransmits; 0 turns detection off.
  unsigned dad_transmits = 1;
};

enum class AddressState : uint8_t { Tentative, Preferred, Duplicate };
const char* to_string(AddressState s);

// Why NeighborDiscovery dropped something (one counter each).
enum class NeighborDiscoveryDrop {
  SolicitationNotForUs,     // an NS whose target is not our address
  ForeignAdvertisement,     // an NA for our preferred address from someone else
  RouterMessage,            // RS, RA: we are a host without autoconfiguration
  Redirect,                 // not followed (no routing table here)
  ToTentativeAddress,       // RFC 4862 §5.4: a datagram to our address before DAD ends
  SolicitationToTentative,  // RFC 4862 §5.4.3: address resolution of a tentative address
  NoUpperLayer,             // a datagram arrived but no DatagramSink is set
  NoAddressToSolicitFrom,   // RFC 4862 §5.4: no NS from a tentative or duplicate address
  kCount
};
const char* to_string(NeighborDiscoveryDrop d);

struct NeighborDiscoveryStats {
  EnumCounters<wire::Ipv6Error> ipv6_errors;
  EnumCounters<wire::Icmpv6Error> icmpv6_errors;
  EnumCounters<wire::NdpError> ndp_errors;
  EnumCounters<NeighborDiscoveryDrop> drops;
  uint64_t frames_sent = 0;
  uint64_t solicitations_received = 0;   // valid NS for our address
  uint64_t advertisements_received = 0;  // valid NA handed to the cache
  uint64_t advertisements_sent = 0;
  uint64_t solicitations_sent = 0;  // resolution and NUD probes
  uint64_t dad_probes_sent = 0;
  uint64_t dad_conflicts = 0;
  uint64_t unreachable = 0;  // datagrams given up after resolution failed
};

class NeighborDiscovery final : private NdpCache::Output {
 public:
  // A datagram whose next hop never answered (RFC 4861 §7.2.2: the owner
  // may send ICMPv6 Destination Unreachable code 3 about it).
  using UnreachableHandler = std::function<void(std::string_view datagram)>;

  // `rng` draws ReachableTime; it is only used in the constructor.
  NeighborDiscovery(const NeighborDiscoveryConfig& config, FrameSink& out, Rng& rng);
  NeighborDiscovery(const NeighborDiscovery&) = delete;
  NeighborDiscovery& operator=(const NeighborDiscovery&) = delete;

  // True for the multicast MACs of the groups we joined: all-nodes and our
  // solicited-node group.
  bool accepts_multicast(const wire::MacAddress& dst) const {
    return dst == all_nodes_mac_ || dst == solicited_node_mac_;
  }

  // Starts duplicate address detection (or makes the address preferred).
  void start(Instant now);

  // An IPv6 frame's payload. NDP is handled here; the datagram is returned
  // when it is for the layer above, nullopt when it was consumed or dropped.
  std::optional<std::string_view> receive(std::string_view payload, Instant now);

  // Sends the IPv6 datagram `datagram` towards `next_hop` (the caller checked
  // the MTU).
  void send(std::string_view datagram, const wire::Ipv6Address& next_hop, Instant now);

  void tick(Instant now);
  std::optional<Instant> next_deadline() const;

  void set_unreachable_handler(UnreachableHandler handler) { unreachable_ = std::move(handler); }
  void count(NeighborDiscoveryDrop why);

  const wire::Ipv6Address& ip() const { return config_.ip; }
  AddressState address_state() const { return state_; }
  Duration reachable_time() const { return cache_config_.reachable_time; }
  const NdpCache& cache() const { return cache_; }
  NdpCache& cache() { return cache_; }
  const NeighborDiscoveryStats& stats() const { return stats_; }

 private:
  // NdpCache::Output
  void send_packet(const wire::MacAddress& dst, std::string_view packet) override;
  void send_solicitation(const wire::Ipv6Address& target,
                         const wire::MacAddress* unicast_to) override;
  void on_unreachable(const wire::Ipv6Address& target, std::string_view packet) override;

  static NdpCache::Config randomized(NdpCache::Config cache, Rng& rng);
  void handle_ndp(const wire::Ipv6View& ip, Instant now);
  void on_solicitation(const wire::Ipv6View& ip, const wire::NeighborSolicitation& ns, Instant now);
  void on_advertisement(const wire::Ipv6View& ip, const wire::NeighborAdvertisement& na,
                        Instant now);
  void advertise(const wire::Ipv6Address& dst, bool solicited, Instant now);
  // Builds an NS into solicitation_ and returns the datagram.
  std::string_view build_solicitation(const wire::Ipv6Address& src, const wire::Ipv6Address& dst,
                                      const wire::Ipv6Address& target, bool with_source_mac);
  void send_frame(const wire::MacAddress& dst, std::string_view datagram);
  void send_dad_probe(Instant now);
  void on_duplicate();

  NeighborDiscoveryConfig config_;
  FrameSink& out_;
  NdpCache::Config cache_config_;  // reachable_time randomized
  NdpCache cache_;
  wire::Ipv6Address solicited_node_;
  wire::MacAddress all_nodes_mac_;
  wire::MacAddress solicited_node_mac_;
  AddressState state_ = AddressState::Tentative;
  unsigned dad_sent_ = 0;
  std::optional<Instant> dad_deadline_;
  UnreachableHandler unreachable_;
  std::vector<char> frame_;          // the frame being sent
  std::vector<char> advertisement_;  // the NA being sent (it may wait in the cache's queue)
  std::vector<char> solicitation_;   // the NS being sent
  NeighborDiscoveryStats stats_;
};

}  // namespace tinytcp::net

#include "net/neighbor_discovery.hh"

#include <algorithm>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "util/buffer.hh"
#include "util/check.hh"

namespace tinytcp::net {

using wire::Ipv6Address;
using wire::Ipv6Header;
using wire::MacAddress;
using wire::NeighborAdvertisement;
using wire::NeighborSolicitation;
namespace icmpv6 = wire::icmpv6;

namespace {
constexpr Ipv6Address kAllNodes = Ipv6Address::from_groups({0xff02, 0, 0, 0, 0, 0, 0, 1});
// RFC 4861 §10: MIN_RANDOM_FACTOR and MAX_RANDOM_FACTOR.
constexpr double kMinRandomFactor = 0.5;
constexpr double kMaxRandomFactor = 1.5;
}  // namespace

const char* to_string(AddressState s) {
  switch (s) {
    case AddressState::Tentative:
      return "tentative";
    case AddressState::Preferred:
      return "preferred";
    case AddressState::Duplicate:
      return "duplicate";
  }
  return "?";
}

const char* to_string(NeighborDiscoveryDrop d) {
  switch (d) {
    case NeighborDiscoveryDrop::SolicitationNotForUs:
      return "neighbor solicitation for another address";
    case NeighborDiscoveryDrop::ForeignAdvertisement:
      return "neighbor advertisement for our address";
    case NeighborDiscoveryDrop::RouterMessage:
      return "router solicitation or advertisement ignored";
    case NeighborDiscoveryDrop::Redirect:
      return "redirect ignored";
    case NeighborDiscoveryDrop::ToTentativeAddress:
      return "datagram to our tentative address";
    case NeighborDiscoveryDrop::SolicitationToTentative:
      return "address resolution of our tentative address";
    case NeighborDiscoveryDrop::NoUpperLayer:
      return "IPv6 datagram but no datagram sink";
    case NeighborDiscoveryDrop::NoAddressToSolicitFrom:
      return "no neighbor solicitation from a tentative or duplicate address";
    case NeighborDiscoveryDrop::kCount:
      break;
  }
  return "?";
}

NdpCache::Config NeighborDiscovery::randomized(NdpCache::Config cache, Rng& rng) {
  // RFC 4861 §6.3.2: ReachableTime is BaseReachableTime times a factor
  // uniform between MIN_RANDOM_FACTOR and MAX_RANDOM_FACTOR.
  const double factor = kMinRandomFactor + rng.unit() * (kMaxRandomFactor - kMinRandomFactor);
  cache.reachable_time = std::chrono::duration_cast<Duration>(cache.reachable_time * factor);
  return cache;
}

NeighborDiscovery::NeighborDiscovery(const NeighborDiscoveryConfig& config, FrameSink& out,
                                     Rng& rng)
    : config_(config),
      out_(out),
      cache_config_(randomized(config.cache, rng)),
      cache_(cache_config_, *this),
      solicited_node_(config.ip.solicited_node_multicast()),
      all_nodes_mac_(wire::ipv6_multicast_mac(kAllNodes)),
      solicited_node_mac_(wire::ipv6_multicast_mac(solicited_node_)),
      frame_(wire::EthernetHeader::kSize + config.mtu),
      advertisement_(Ipv6Header::kSize + NeighborAdvertisement::kSize + 8),
      solicitation_(Ipv6Header::kSize + NeighborSolicitation::kSize + 8) {
  TINYTCP_CHECK(config_.mtu >= wire::ipv6::kMinimumMtu);
  TINYTCP_CHECK(!config_.ip.is_multicast() && !config_.ip.is_unspecified());
  if (config_.dad_transmits == 0) {
    state_ = AddressState::Preferred;
  }
}

void NeighborDiscovery::count(NeighborDiscoveryDrop why) {
  stats_.drops.count(why);
  SPDLOG_DEBUG("nd {}: drop: {}", config_.ip, to_string(why));
}

void NeighborDiscovery::send_frame(const MacAddress& dst, std::string_view datagram) {
  TINYTCP_DCHECK(datagram.size() <= config_.mtu);
  char* p = frame_.data();
  std::memcpy(p, dst.bytes.data(), 6);
  std::memcpy(p + 6, config_.mac.bytes.data(), 6);
  p[12] = static_cast<char>(0x86);
  p[13] = static_cast<char>(0xdd);
  std::memcpy(p + wire::EthernetHeader::kSize, datagram.data(), datagram.size());
  ++stats_.frames_sent;
  out_.send_frame(std::string_view(p, wire::EthernetHeader::kSize + datagram.size()));
}

void NeighborDiscovery::send_packet(const MacAddress& dst, std::string_view packet) {
  send_frame(dst, packet);
}

void NeighborDiscovery::send(std::string_view datagram, const Ipv6Address& next_hop, Instant now) {
  if (next_hop.is_multicast()) {
    send_frame(wire::ipv6_multicast_mac(next_hop), datagram);
    return;
  }
  cache_.send(next_hop, datagram, now);
}

std::string_view NeighborDiscovery::build_solicitation(const Ipv6Address& src,
                                                       const Ipv6Address& dst,
                                                       const Ipv6Address& target,
                                                       bool with_source_mac) {
  NeighborSolicitation ns;
  ns.target = target;
  if (with_source_mac) {
    ns.source_link_layer = config_.mac;
  }
  Ipv6Header h;
  h.payload_length = static_cast<uint16_t>(wire::ndp_size(ns));
  h.next_header = wire::ipv6::kIcmpv6;
  h.hop_limit = wire::ndp::kHopLimit;
  h.src = src;
  h.dst = dst;
  BufferWriter w(solicitation_.data(), solicitation_.size());
  serialize(h, w);
  serialize(ns, src, dst, w);
  TINYTCP_DCHECK(w.ok());
  return w.written();
}

void NeighborDiscovery::send_solicitation(const Ipv6Address& target, const MacAddress* unicast_to) {
  if (state_ != AddressState::Preferred) {
    // RFC 4862 §5.4: a tentative address is the source of nothing. The
    // cache retransmits, and gives up as if unanswered.
    count(NeighborDiscoveryDrop::NoAddressToSolicitFrom);
    return;
  }
  ++stats_.solicitations_sent;
  // §7.2.2: from our address, with our MAC (§4.3: a must for multicast).
  if (unicast_to == nullptr) {
    const Ipv6Address group = target.solicited_node_multicast();
    send_frame(wire::ipv6_multicast_mac(group),
               build_solicitation(config_.ip, group, target, true));
  } else {
    send_frame(*unicast_to, build_solicitation(config_.ip, target, target, true));
  }
}

void NeighborDiscovery::on_unreachable(const Ipv6Address& target, std::string_view packet) {
  ++stats_.unreachable;
  static_cast<void>(target);  // when SPDLOG_DEBUG compiles to nothing
  SPDLOG_DEBUG("nd {}: {} unreachable", config_.ip, target);
  if (unreachable_) {
    unreachable_(packet);
  }
}

void NeighborDiscovery::advertise(const Ipv6Address& dst, bool solicited, Instant now) {
  // §7.2.4: S as asked, O set (our address is no anycast one), our MAC.
  NeighborAdvertisement na;
  na.solicited = solicited;
  na.override_flag = true;
  na.target = config_.ip;
  na.target_link_layer = config_.mac;
  Ipv6Header h;
  h.payload_length = static_cast<uint16_t>(wire::ndp_size(na));
  h.next_header = wire::ipv6::kIcmpv6;
  h.hop_limit = wire::ndp::kHopLimit;
  h.src = config_.ip;
  h.dst = dst;
  BufferWriter w(advertisement_.data(), advertisement_.size());
  serialize(h, w);
  serialize(na, h.src, dst, w);
  TINYTCP_DCHECK(w.ok());
  ++stats_.advertisements_sent;
  send(w.written(), dst, now);
}

std::optional<std::string_view> NeighborDiscovery::receive(std::string_view payload, Instant now) {
  const auto ip = wire::parse_ipv6(payload);
  if (!ip) {
    stats_.ipv6_errors.count(ip.error());
    SPDLOG_DEBUG("nd {}: drop ipv6: {}", config_.ip, to_string(ip.error()));
    return std::nullopt;
  }
  if (ip->header.next_header == wire::ipv6::kIcmpv6 && !ip->payload.empty()) {
    const auto type = static_cast<uint8_t>(ip->payload[0]);
    if (type >= icmpv6::kRouterSolicitation && type <= icmpv6::kRedirect) {
      handle_ndp(*ip, now);
      return std::nullopt;
    }
  }
  if (state_ != AddressState::Preferred && ip->header.dst == config_.ip) {
    count(NeighborDiscoveryDrop::ToTentativeAddress);
    return std::nullopt;
  }
  // Without Ethernet padding: the datagram ends where its payload does.
  return payload.substr(0, Ipv6Header::kSize + ip->payload.size());
}

void NeighborDiscovery::handle_ndp(const wire::Ipv6View& ip, Instant now) {
  const auto m = wire::parse_icmpv6(ip.payload, ip.header.src, ip.header.dst);
  if (!m) {
    stats_.icmpv6_errors.count(m.error());
    SPDLOG_DEBUG("nd {}: drop icmpv6: {}", config_.ip, to_string(m.error()));
    return;
  }
  switch (m->type) {
    case icmpv6::kNeighborSolicitation: {
      const auto ns = wire::parse_neighbor_solicitation(ip.header, *m);
      if (!ns) {
        stats_.ndp_errors.count(ns.error());
        SPDLOG_DEBUG("nd {}: drop NS: {}", config_.ip, to_string(ns.error()));
        return;
      }
      on_solicitation(ip, *ns, now);
      return;
    }
    case icmpv6::kNeighborAdvertisement: {
      const auto na = wire::parse_neighbor_advertisement(ip.header, *m);
      if (!na) {
        stats_.ndp_errors.count(na.error());
        SPDLOG_DEBUG("nd {}: drop NA: {}", config_.ip, to_string(na.error()));
        return;
      }
      on_advertisement(ip, *na, now);
      return;
    }
    case icmpv6::kRedirect:
      count(NeighborDiscoveryDrop::Redirect);
      return;
    default:
      count(NeighborDiscoveryDrop::RouterMessage);
      return;
  }
}

void NeighborDiscovery::on_solicitation(const wire::Ipv6View& ip, const NeighborSolicitation& ns,
                                        Instant now) {
  if (ns.target != config_.ip) {
    count(NeighborDiscoveryDrop::SolicitationNotForUs);
    return;
  }
  const bool probe = ip.header.src.is_unspecified();
  if (state_ == AddressState::Tentative) {
    if (probe) {
      // RFC 4862 §5.4.3: someone else is probing for the same address.
      on_duplicate();
    } else {
      count(NeighborDiscoveryDrop::SolicitationToTentative);
    }
    return;
  }
  if (state_ == AddressState::Duplicate) {
    count(NeighborDiscoveryDrop::SolicitationToTentative);
    return;
  }
  ++stats_.solicitations_received;
  if (probe) {
    // §7.2.4: answer a DAD probe to all-nodes, S clear; learn nothing.
    advertise(kAllNodes, false, now);
    return;
  }
  // §7.2.3: the sender's MAC makes or refreshes its entry (STALE).
  if (ns.source_link_layer) {
    cache_.on_link_layer_address(ip.header.src, *ns.source_link_layer, now);
  }
  advertise(ip.header.src, true, now);
}

void NeighborDiscovery::on_advertisement(const wire::Ipv6View& ip, const NeighborAdvertisement& na,
                                         Instant now) {
  static_cast<void>(ip);
  if (na.target == config_.ip) {
    if (state_ == AddressState::Tentative) {
      on_duplicate();  // RFC 4862 §5.4.4
    } else {
      // Another node claims our address after DAD: log and count (§5.4.4
      // leaves the rest to the administrator).
      count(NeighborDiscoveryDrop::ForeignAdvertisement);
    }
    return;
  }
  ++stats_.advertisements_received;
  cache_.on_advertisement(na, now);
}

void NeighborDiscovery::start(Instant now) {
  if (config_.dad_transmits == 0 || state_ != AddressState::Tentative) {
    return;
  }
  dad_sent_ = 0;
  send_dad_probe(now);
}

void NeighborDiscovery::send_dad_probe(Instant now) {
  // RFC 4862 §5.4.2: from ::, to the solicited-node group of the address,
  // no source link-layer option.
  ++dad_sent_;
  ++stats_.dad_probes_sent;
  send_frame(solicited_node_mac_,
             build_solicitation(Ipv6Address{}, solicited_node_, config_.ip, false));
  dad_deadline_ = now + config_.cache.retrans_timer;
}

void NeighborDiscovery::on_duplicate() {
  ++stats_.dad_conflicts;
  state_ = AddressState::Duplicate;
  dad_deadline_.reset();
  spdlog::warn("IPv6 address {} is a duplicate on this link: not used", config_.ip);
}

void NeighborDiscovery::tick(Instant now) {
  if (dad_deadline_ && *dad_deadline_ <= now) {
    if (dad_sent_ < config_.dad_transmits) {
      send_dad_probe(now);
    } else {
      dad_deadline_.reset();
      state_ = AddressState::Preferred;
      SPDLOG_DEBUG("nd {}: duplicate address detection passed", config_.ip);
    }
  }
  cache_.tick(now);
}

std::optional<Instant> NeighborDiscovery::next_deadline() const {
  const auto cache = cache_.next_deadline();
  if (!dad_deadline_) {
    return cache;
  }
  if (!cache) {
    return dad_deadline_;
  }
  return std::min(*cache, *dad_deadline_);
}

}  // namespace tinytcp::net

#include "net/router.hh"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "net/route_trie.hh"
#include "util/buffer.hh"
#include "util/checksum.hh"
#include "wire/icmp.hh"

namespace tinytcp::net {

using wire::Ipv4Address;
using wire::Ipv4Header;
namespace icmp = wire::icmp;

const char* to_string(RouterDrop d) {
  switch (d) {
    case RouterDrop::BadInterface:
      return "route names a missing interface";
    case RouterDrop::NoRoute:
      return "no route";
    case RouterDrop::TtlExpired:
      return "TTL expired";
    case RouterDrop::NeedsFragmentation:
      return "too big for the link and DF set";
    case RouterDrop::NotForwardable:
      return "broadcast, multicast or bad source: not forwarded";
    case RouterDrop::LocalIcmpIgnored:
      return "ICMP to the router that needs no answer";
    case RouterDrop::LocalProtocol:
      return "protocol not served by the router";
    case RouterDrop::BadIcmp:
      return "malformed ICMP to the router";
    case RouterDrop::NoRouteForReply:
      return "no route for the router's own ICMP";
    case RouterDrop::kCount:
      break;
  }
  return "?";
}

Router::Router(const RouterConfig& config, std::unique_ptr<RouteTable> table)
    : table_(table ? std::move(table) : std::make_unique<RouteTrie>()),
      icmp_(config.icmp),
      reassembler_(config.reassembly) {}

size_t Router::add_interface(const NetworkInterfaceConfig& config, FrameSink& out) {
  interfaces_.push_back(std::make_unique<NetworkInterface>(config, out));
  const size_t index = interfaces_.size() - 1;
  interfaces_.back()->set_datagram_sink(this, index);
  return index;
}

void Router::start(Instant now) {
  for (auto& i : interfaces_) {
    i->start(now);
  }
}

void Router::drop(RouterDrop why) {
  stats_.drops.count(why);
  SPDLOG_DEBUG("router: drop: {}", to_string(why));
}

bool Router::is_local(Ipv4Address a) const {
  for (const auto& i : interfaces_) {
    if (i->ip() == a) {
      return true;
    }
  }
  return false;
}

void Router::route(std::string_view datagram, size_t index, Instant now) {
  static_cast<void>(index);
  if (datagram.size() >= Ipv4Header::kMinSize) {
    // Look the destination up before verifying the header, so that the
    // next hop's ARP entry loads while the checksum is computed. On a bad
    // header this is wasted work and nothing else.
    BufferReader peek(datagram.substr(16, 4));
    const Ipv4Address dst{peek.u32()};
    const Route* early = table_->lookup(dst);
    if (early != nullptr && early->interface < interfaces_.size()) {
      interfaces_[early->interface]->prefetch_next_hop(early->next_hop.value_or(dst));
    }
  }
  const LinkOffload* offload = rx_offload_;
  rx_offload_ = nullptr;  // it belongs to this datagram only
  const auto ip = wire::parse_ipv4(datagram);
  if (!ip) {
    stats_.ipv4_errors.count(ip.error());
    SPDLOG_DEBUG("router: drop ipv4: {}", to_string(ip.error()));
    return;
  }
  if (offload != nullptr) {
    if (const auto error = check_ipv4_offload(*offload, datagram, wire::EthernetHeader::kSize)) {
      stats_.offload_errors.count(*error);
      SPDLOG_DEBUG("router: drop: {}", to_string(*error));
      return;
    }
  }
  const Ipv4Header& h = ip->header;
  if (is_local(h.dst)) {
    if (h.is_fragment()) {
      if (const auto whole = reassembler_.add(*ip, datagram, now)) {
        const auto reassembled = wire::parse_ipv4(*whole);
        if (reassembled) {
          deliver_local(*reassembled, *whole, now);
        }
      }
      return;
    }
    deliver_local(*ip, datagram, now);
    return;
  }
  // RFC 1812 §5.3.5.1 / §5.3.7: limited broadcasts and datagrams from
  // impossible sources are not forwarded; we do not route multicast.
  if (h.dst.is_limited_broadcast() || h.dst.is_multicast() || h.src.is_limited_broadcast() ||
      h.src.is_multicast() || h.src.is_loopback() || h.dst.is_loopback()) {
    drop(RouterDrop::NotForwardable);
    return;
  }
  // RFC 1812 §5.3.1: a datagram whose TTL would reach zero is not forwarded.
  if (h.ttl <= 1) {
    drop(RouterDrop::TtlExpired);
    send_icmp_error(icmp::kTimeExceeded, icmp::kTtlExceeded, 0, *ip, datagram, now);
    return;
  }
  const Route* r = table_->lookup(h.dst);
  if (r == nullptr) {
    drop(RouterDrop::NoRoute);
    send_icmp_error(icmp::kDestinationUnreachable, icmp::kNetUnreachable, 0, *ip, datagram, now);
    return;
  }
  if (r->interface >= interfaces_.size()) {
    drop(RouterDrop::BadInterface);
    return;
  }
  NetworkInterface& out = *interfaces_[r->interface];
  const Ipv4Address next_hop = r->next_hop.value_or(h.dst);
  const uint8_t ttl = static_cast<uint8_t>(h.ttl - 1);
  if (offload != nullptr) {
    forward_offloaded(*ip, datagram, *offload, ttl, out, next_hop, now);
    return;
  }
  forward(*ip, datagram, ttl, out, next_hop, now, nullptr);
}

std::string_view Router::rewrite_header(const wire::Ipv4View& ip, std::string_view datagram,
                                        uint8_t ttl) {
  const Ipv4Header& h = ip.header;
  const size_t header_length = h.header_length;
  std::memcpy(head_.data(), datagram.data(), header_length);
  const auto old_word = static_cast<uint16_t>((h.ttl << 8) | h.protocol);
  const auto new_word = static_cast<uint16_t>((ttl << 8) | h.protocol);
  const uint16_t checksum = checksum_adjust(h.checksum, old_word, new_word);  // RFC 1624 eqn. 3
  head_[8] = static_cast<char>(ttl);
  head_[10] = static_cast<char>(checksum >> 8);
  head_[11] = static_cast<char>(checksum);
  return std::string_view(head_.data(), header_length);
}

void Router::forward(const wire::Ipv4View& ip, std::string_view datagram, uint8_t ttl,
                     NetworkInterface& out, Ipv4Address next_hop, Instant now,
                     const LinkOffload* offload) {
  const Ipv4Header& h = ip.header;
  const bool gso = offload != nullptr && offload->gso();  // its segments fit: checked
  if (!gso && h.total_length > out.mtu()) {
    if (h.dont_fragment) {
      drop(RouterDrop::NeedsFragmentation);
      // RFC 1191 §4: the next-hop MTU in the low 16 bits of the second word.
      send_icmp_error(icmp::kDestinationUnreachable, icmp::kFragmentationNeeded, out.mtu(), ip,
                      datagram, now);
      return;
    }
    ++stats_.forwarded;
    fragment(ip, ttl, out, next_hop, now);
    return;
  }
  // TTL and checksum are rewritten in a copy of the header; the rest of the
  // datagram is gathered into the frame untouched.
  const std::string_view head = rewrite_header(ip, datagram, ttl);
  ++stats_.forwarded;
  out.send_datagram(head, datagram.substr(head.size(), h.total_length - head.size()), next_hop, now,
                    offload);
}

void Router::forward_offloaded(const wire::Ipv4View& ip, std::string_view datagram,
                               const LinkOffload& offload, uint8_t ttl, NetworkInterface& out,
                               Ipv4Address next_hop, Instant now) {
  const Ipv4Header& h = ip.header;
  const size_t link = wire::EthernetHeader::kSize;
  if (!offload.gso()) {
    if (out.config().offload && h.total_length <= out.mtu()) {
      forward(ip, datagram, ttl, out, next_hop, now, &offload);
      return;
    }
    // Complete the checksum in a copy; then it is a datagram like any other.
    scratch_.assign(datagram.begin(), datagram.begin() + h.total_length);
    complete_checksum(scratch_.data(), scratch_.size(), offload, link);
    ++stats_.checksums_completed;
    const std::string_view copy(scratch_.data(), scratch_.size());
    if (const auto whole = wire::parse_ipv4(copy)) {
      forward(*whole, copy, ttl, out, next_hop, now, nullptr);
    }
    return;
  }
  const size_t segment = gso_header_bytes(datagram) + offload.gso_size;
  if (segment > out.mtu() && h.dont_fragment) {
    drop(RouterDrop::NeedsFragmentation);
    send_icmp_error(icmp::kDestinationUnreachable, icmp::kFragmentationNeeded, out.mtu(), ip,
                    datagram, now);
    return;
  }
  if (out.config().offload && segment <= out.mtu()) {
    ++stats_.gso_forwarded;
    forward(ip, datagram, ttl, out, next_hop, now, &offload);
    return;
  }
  // Segments in software, each with its checksum complete; ones still too
  // big for the link (no DF) are fragmented like any datagram.
  const std::string_view head = rewrite_header(ip, datagram, ttl);
  ++stats_.forwarded;
  ++stats_.gso_segmented;
  segmenter_.segment(head, datagram.substr(head.size(), h.total_length - head.size()),
                     offload.gso_size, [&](std::string_view seg_head, std::string_view payload) {
                       ++stats_.segments_sent;
                       if (seg_head.size() + payload.size() <= out.mtu()) {
                         out.send_datagram(seg_head, payload, next_hop, now);
                         return;
                       }
                       scratch_.assign(seg_head.begin(), seg_head.end());
                       scratch_.insert(scratch_.end(), payload.begin(), payload.end());
                       const std::string_view copy(scratch_.data(), scratch_.size());
                       if (const auto seg = wire::parse_ipv4(copy)) {
                         fragment(*seg, seg->header.ttl, out, next_hop, now);
                       }
                     });
}

void Router::fragment(const wire::Ipv4View& ip, uint8_t ttl, NetworkInterface& out,
                      Ipv4Address next_hop, Instant now) {
  // RFC 791 §3.2 (fragmentation procedure). Every fragment gets a 20-byte
  // header; the options are not copied (we never send options).
  const Ipv4Header& h = ip.header;
  const size_t chunk = (out.mtu() - Ipv4Header::kMinSize) & ~size_t{7};
  const std::string_view payload = ip.payload;
  for (size_t offset = 0; offset < payload.size(); offset += chunk) {
    const size_t n = std::min(chunk, payload.size() - offset);
    Ipv4Header f = h;
    f.ttl = ttl;
    f.total_length = static_cast<uint16_t>(Ipv4Header::kMinSize + n);
    f.fragment_offset = static_cast<uint16_t>(h.fragment_offset + offset);
    f.more_fragments = h.more_fragments || offset + n < payload.size();
    BufferWriter w(head_.data(), head_.size());
    serialize(f, w);
    ++stats_.fragments_sent;
    out.send_datagram(w.written(), payload.substr(offset, n), next_hop, now);
  }
}

void Router::deliver_local(const wire::Ipv4View& ip, std::string_view bytes, Instant now) {
  ++stats_.delivered_locally;
  if (ip.header.protocol != static_cast<uint8_t>(wire::IpProtocol::kIcmp)) {
    drop(RouterDrop::LocalProtocol);
    send_icmp_error(icmp::kDestinationUnreachable, icmp::kProtocolUnreachable, 0, ip, bytes, now);
    return;
  }
  const auto m = wire::parse_icmp(ip.payload);
  if (!m) {
    drop(RouterDrop::BadIcmp);
    return;
  }
  if (m->type != icmp::kEchoRequest || ip.header.src.is_zero() ||
      ip.header.src.is_limited_broadcast() || ip.header.src.is_multicast()) {
    drop(RouterDrop::LocalIcmpIgnored);
    return;
  }
  send_local(icmp_.echo_reply(ip, *m, ip.header.dst), now);
}

void Router::send_icmp_error(uint8_t type, uint8_t code, uint32_t rest,
                             const wire::Ipv4View& original, std::string_view original_bytes,
                             Instant now) {
  // The error leaves by the interface that leads back to the source, from
  // that interface's address (RFC 1812 §4.3.2.4).
  const Route* r = table_->lookup(original.header.src);
  if (r == nullptr || r->interface >= interfaces_.size()) {
    drop(RouterDrop::NoRouteForReply);
    return;
  }
  const auto datagram =
      icmp_.error(type, code, rest, original, original_bytes, interfaces_[r->interface]->ip(), now);
  if (datagram.empty()) {
    return;
  }
  ++stats_.icmp_sent;
  interfaces_[r->interface]->send_datagram(datagram, r->next_hop.value_or(original.header.src),
                                           now);
}

void Router::send_local(std::string_view datagram, Instant now) {
  const auto ip = wire::parse_ipv4(datagram);
  if (!ip) {
    return;
  }
  const Route* r = table_->lookup(ip->header.dst);
  if (r == nullptr || r->interface >= interfaces_.size()) {
    drop(RouterDrop::NoRouteForReply);
    return;
  }
  ++stats_.icmp_sent;
  NetworkInterface& out = *interfaces_[r->interface];
  const Ipv4Address next_hop = r->next_hop.value_or(ip->header.dst);
  if (ip->header.total_length > out.mtu()) {
    fragment(*ip, ip->header.ttl, out, next_hop, now);  // a large echo reply
    return;
  }
  out.send_datagram(datagram, next_hop, now);
}

void Router::tick(Instant now) {
  for (auto& i : interfaces_) {
    i->tick(now);
  }
  reassembler_.tick(now);
}

std::optional<Instant> Router::next_deadline() const {
  std::optional<Instant> earliest = reassembler_.next_deadline();
  for (const auto& i : interfaces_) {
    const auto t = i->next_deadline();
    if (t && (!earliest || *t < *earliest)) {
      earliest = t;
    }
  }
  return earliest;
}

}  // namespace tinytcp::net

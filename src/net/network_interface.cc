#include "net/network_interface.hh"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "util/buffer.hh"
#include "util/check.hh"

namespace tinytcp::net {

using wire::ArpMessage;
using wire::ArpOpcode;
using wire::EthernetHeader;
using wire::EtherType;
using wire::Ipv4Address;
using wire::MacAddress;

const char* to_string(InterfaceDrop d) {
  switch (d) {
    case InterfaceDrop::NotForUs:
      return "frame not for our MAC";
    case InterfaceDrop::UnknownEtherType:
      return "EtherType neither IPv4 nor ARP (nor IPv6 when on)";
    case InterfaceDrop::NoUpperLayer:
      return "IPv4 datagram but no datagram sink";
    case InterfaceDrop::ArpNotForUs:
      return "ARP for another address";
    case InterfaceDrop::ArpFromInvalidSender:
      return "ARP sender address invalid";
    case InterfaceDrop::ArpTableFull:
      return "ARP table full";
    case InterfaceDrop::DatagramTooBig:
      return "datagram larger than the MTU";
    case InterfaceDrop::PendingEvicted:
      return "ARP queue full: oldest datagram dropped";
    case InterfaceDrop::PendingTimeout:
      return "no ARP reply in time";
    case InterfaceDrop::kCount:
      break;
  }
  return "?";
}

NetworkInterface::NetworkInterface(const NetworkInterfaceConfig& config, FrameSink& out, Rng* rng)
    : config_(config),
      out_(out),
      arp_(config.arp),
      frame_(
          EthernetHeader::kSize +
          std::max<size_t>(config.offload ? kMaxOffloadDatagram : config.mtu, ArpMessage::kSize)),
      pending_(config.pending_datagrams),
      pending_bytes_(config.pending_bytes) {
  TINYTCP_CHECK(config_.pending_datagrams > 0);
  TINYTCP_CHECK(config_.pending_bytes >= config_.mtu);
  BufferWriter w(request_template_.data(), request_template_.size());
  serialize(
      EthernetHeader{MacAddress::broadcast(), config_.mac, static_cast<uint16_t>(EtherType::kArp)},
      w);
  serialize(ArpMessage{ArpOpcode::kRequest, config_.mac, config_.ip, MacAddress{}, Ipv4Address{}},
            w);
  TINYTCP_CHECK(w.ok() && w.size() == request_template_.size());
  TINYTCP_CHECK(config_.mtu >= 68);  // RFC 791: every host must take 68 bytes
  if (config_.ipv6) {
    TINYTCP_CHECK(rng != nullptr);
    nd_.emplace(NeighborDiscoveryConfig{config_.mac, *config_.ipv6, config_.mtu, config_.ndp,
                                        config_.dad_transmits},
                out_, *rng);
  }
}

void NetworkInterface::drop(InterfaceDrop why) {
  stats_.drops.count(why);
  SPDLOG_DEBUG("interface {}: drop: {}", config_.ip, to_string(why));
}

void NetworkInterface::start(Instant now) {
  static_cast<void>(now);
  // RFC 5227 §2.3: an ARP announcement is a request with sender and target
  // address both ours, target MAC zero, broadcast.
  send_arp(ArpOpcode::kRequest, MacAddress::broadcast(), MacAddress{}, config_.ip);
  if (nd_) {
    nd_->start(now);
  }
}

void NetworkInterface::send_ipv4_frame(const MacAddress& dst, std::string_view head,
                                       std::string_view tail, const LinkOffload* offload) {
  char* p = frame_.data();
  std::memcpy(p, dst.bytes.data(), 6);
  std::memcpy(p + 6, config_.mac.bytes.data(), 6);
  p[12] = 0x08;
  p[13] = 0x00;
  std::memcpy(p + EthernetHeader::kSize, head.data(), head.size());
  if (!tail.empty()) {
    std::memcpy(p + EthernetHeader::kSize + head.size(), tail.data(), tail.size());
  }
  ++stats_.frames_sent;
  ++stats_.datagrams_sent;
  const std::string_view frame(p, EthernetHeader::kSize + head.size() + tail.size());
  if (offload != nullptr) {
    out_.send_offloaded_frame(frame, *offload);
  } else {
    out_.send_frame(frame);
  }
}

void NetworkInterface::send_datagram(std::string_view head, std::string_view tail,
                                     Ipv4Address next_hop, Instant now,
                                     const LinkOffload* offload) {
  if (!config_.offload || (offload != nullptr && !offload->active())) {
    offload = nullptr;
  }
  const size_t limit = offload != nullptr && offload->gso() ? kMaxOffloadDatagram : config_.mtu;
  if (head.size() + tail.size() > limit) {
    drop(InterfaceDrop::DatagramTooBig);
    return;
  }
  if (next_hop.is_limited_broadcast()) {
    send_ipv4_frame(MacAddress::broadcast(), head, tail, offload);
    return;
  }
  if (const MacAddress* mac = arp_.lookup(next_hop, now)) {
    send_ipv4_frame(*mac, head, tail, offload);
    return;
  }
  switch (arp_.on_miss(next_hop, now)) {
    case ArpCache::Miss::TableFull:
      drop(InterfaceDrop::ArpTableFull);
      return;
    case ArpCache::Miss::SendRequest:
      send_arp_request(next_hop);
      break;
    case ArpCache::Miss::AlreadyRequested:
      break;
  }
  enqueue(head, tail, next_hop, now, offload);
}

void NetworkInterface::send_ipv6_datagram(std::string_view datagram,
                                          const wire::Ipv6Address& next_hop, Instant now) {
  if (!nd_) {
    drop(InterfaceDrop::UnknownEtherType);
    return;
  }
  if (datagram.size() > config_.mtu) {
    drop(InterfaceDrop::DatagramTooBig);
    return;
  }
  ++stats_.datagrams_sent;
  nd_->send(datagram, next_hop, now);
}

void NetworkInterface::evict_pending_head(InterfaceDrop why) {
  // Dead heads are trimmed eagerly, so the head is live.
  pending_[pending_head_].live = false;
  --pending_live_;
  drop(why);
  pending_head_ = next_slot(pending_head_);
  --pending_count_;
  trim_pending_head();
}

void NetworkInterface::enqueue(std::string_view head, std::string_view tail, Ipv4Address next_hop,
                               Instant now, const LinkOffload* offload) {
  const size_t length = head.size() + tail.size();
  if (length > pending_bytes_.size()) {
    drop(InterfaceDrop::PendingEvicted);  // a GSO datagram larger than the whole queue
    return;
  }
  if (pending_count_ == pending_.size()) {
    evict_pending_head(InterfaceDrop::PendingEvicted);
  }
  // The bytes are a FIFO in one buffer: [head entry, write position), which
  // may wrap. Evict the oldest until `length` contiguous bytes are free.
  const size_t capacity = pending_bytes_.size();
  size_t at = 0;
  for (;;) {
    if (pending_count_ == 0) {
      at = 0;
      break;
    }
    const size_t oldest = pending_[pending_head_].offset;
    if (pending_write_ > oldest) {  // not wrapped: free at the end and before the oldest
      if (capacity - pending_write_ >= length) {
        at = pending_write_;
        break;
      }
      if (oldest >= length) {
        at = 0;
        break;
      }
    } else if (oldest - pending_write_ >= length) {  // wrapped: free between
      at = pending_write_;
      break;
    }
    evict_pending_head(InterfaceDrop::PendingEvicted);
  }
  char* data = pending_bytes_.data() + at;
  std::memcpy(data, head.data(), head.size());
  if (!tail.empty()) {
    std::memcpy(data + head.size(), tail.data(), tail.size());
  }
  pending_write_ = at + length;
  const size_t slot = slot_at(pending_count_);
  Pending& p = pending_[slot];
  p.next_hop = next_hop;
  p.offset = static_cast<uint32_t>(at);
  p.length = static_cast<uint32_t>(length);
  p.queued_at = now;
  p.live = true;
  p.offloaded = offload != nullptr;
  p.offload = offload != nullptr ? *offload : LinkOffload{};
  ++pending_count_;
  ++pending_live_;
  ++stats_.datagrams_queued;
}

void NetworkInterface::trim_pending_head() {
  while (pending_count_ > 0 && !pending_[pending_head_].live) {
    pending_head_ = next_slot(pending_head_);
    --pending_count_;
  }
}

void NetworkInterface::flush_pending(Ipv4Address ip, const MacAddress& mac) {
  if (pending_live_ == 0) {
    return;
  }
  for (size_t i = 0; i < pending_count_; ++i) {
    const size_t slot = slot_at(i);
    Pending& p = pending_[slot];
    if (p.live && p.next_hop == ip) {
      p.live = false;
      --pending_live_;
      send_ipv4_frame(mac, std::string_view(pending_bytes_.data() + p.offset, p.length), {},
                      p.offloaded ? &p.offload : nullptr);
    }
  }
  trim_pending_head();
}

void NetworkInterface::tick(Instant now) {
  while (pending_count_ > 0 && pending_[pending_head_].queued_at + config_.pending_timeout <= now) {
    evict_pending_head(InterfaceDrop::PendingTimeout);
  }
  if (nd_) {
    nd_->tick(now);
  }
}

std::optional<Instant> NetworkInterface::next_deadline() const {
  std::optional<Instant> deadline;
  if (pending_count_ > 0) {
    deadline = pending_[pending_head_].queued_at + config_.pending_timeout;
  }
  if (nd_) {
    if (const auto nd = nd_->next_deadline(); nd && (!deadline || *nd < *deadline)) {
      deadline = nd;
    }
  }
  return deadline;
}

void NetworkInterface::send_arp_request(Ipv4Address target) {
  // The ARP-miss path: copy the request made once in the constructor and
  // fill in the target address (the last 4 bytes).
  char* p = frame_.data();
  std::memcpy(p, request_template_.data(), request_template_.size());
  const size_t at = request_template_.size() - 4;
  p[at] = static_cast<char>(target.value >> 24);
  p[at + 1] = static_cast<char>(target.value >> 16);
  p[at + 2] = static_cast<char>(target.value >> 8);
  p[at + 3] = static_cast<char>(target.value);
  ++stats_.frames_sent;
  ++stats_.arp_requests_sent;
  out_.send_frame(std::string_view(p, request_template_.size()));
}

void NetworkInterface::send_arp(ArpOpcode opcode, const MacAddress& dst_mac,
                                const MacAddress& target_mac, Ipv4Address target_ip) {
  BufferWriter w(frame_.data(), frame_.size());
  serialize(EthernetHeader{dst_mac, config_.mac, static_cast<uint16_t>(EtherType::kArp)}, w);
  serialize(ArpMessage{opcode, config_.mac, config_.ip, target_mac, target_ip}, w);
  TINYTCP_DCHECK(w.ok());
  ++stats_.frames_sent;
  if (opcode == ArpOpcode::kRequest) {
    ++stats_.arp_requests_sent;
  } else {
    ++stats_.arp_replies_sent;
  }
  out_.send_frame(w.written());
}

void NetworkInterface::receive_frame(std::string_view frame, Instant now) {
  ++stats_.frames_received;
  const auto eth = wire::parse_ethernet(frame);
  if (!eth) {
    stats_.ethernet_errors.count(eth.error());
    SPDLOG_DEBUG("interface {}: drop ethernet: {}", config_.ip, to_string(eth.error()));
    return;
  }
  if (eth->header.dst != config_.mac && !eth->header.dst.is_broadcast() &&
      !(nd_ && eth->header.type == static_cast<uint16_t>(EtherType::kIpv6) &&
        nd_->accepts_multicast(eth->header.dst))) {
    drop(InterfaceDrop::NotForUs);
    return;
  }
  switch (eth->header.type) {
    case static_cast<uint16_t>(EtherType::kIpv4):
      if (up_ == nullptr) {
        drop(InterfaceDrop::NoUpperLayer);
        return;
      }
      ++stats_.datagrams_delivered;
      up_->on_datagram(eth->payload, index_, now, eth->header.dst != config_.mac);
      return;
    case static_cast<uint16_t>(EtherType::kArp):
      handle_arp(eth->payload, now);
      return;
    case static_cast<uint16_t>(EtherType::kIpv6):
      if (!nd_) {
        drop(InterfaceDrop::UnknownEtherType);
        return;
      }
      handle_ipv6(eth->payload, eth->header.dst != config_.mac, now);
      return;
    default:
      drop(InterfaceDrop::UnknownEtherType);
      return;
  }
}

void NetworkInterface::handle_ipv6(std::string_view payload, bool link_multicast, Instant now) {
  const auto datagram = nd_->receive(payload, now);
  if (!datagram) {
    return;
  }
  if (up_ == nullptr) {
    nd_->count(NeighborDiscoveryDrop::NoUpperLayer);
    return;
  }
  ++stats_.datagrams_delivered;
  up_->on_datagram(*datagram, index_, now, link_multicast);
}

void NetworkInterface::handle_arp(std::string_view payload, Instant now) {
  const auto arp = wire::parse_arp(payload);
  if (!arp) {
    stats_.arp_errors.count(arp.error());
    SPDLOG_DEBUG("interface {}: drop arp: {}", config_.ip, to_string(arp.error()));
    return;
  }
  const Ipv4Address sender = arp->sender_ip;
  if (sender == config_.ip || sender.is_limited_broadcast() || sender.is_multicast() ||
      arp->sender_mac.is_multicast() || arp->sender_mac == config_.mac) {
    // An address conflict, a loop or a spoof. (RFC 5227 probes, sender
    // 0.0.0.0, are answered below but teach us nothing.)
    drop(InterfaceDrop::ArpFromInvalidSender);
    return;
  }
  const bool for_us = arp->target_ip == config_.ip;
  // RFC 826 "Packet Reception": refresh a mapping we already hold, whoever
  // the packet is for; add one only if it is for us.
  if (!sender.is_zero() && (for_us || arp_.contains(sender, now))) {
    if (!arp_.learn(sender, arp->sender_mac, now)) {
      drop(InterfaceDrop::ArpTableFull);
      return;
    }
    ++stats_.arp_learned;
    flush_pending(sender, arp->sender_mac);
  }
  if (!for_us) {
    drop(InterfaceDrop::ArpNotForUs);
    return;
  }
  if (arp->opcode == ArpOpcode::kRequest) {
    send_arp(ArpOpcode::kReply, arp->sender_mac, arp->sender_mac, sender);
  }
}

}  // namespace tinytcp::net

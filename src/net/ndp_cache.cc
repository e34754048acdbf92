#include "net/ndp_cache.hh"

#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "util/check.hh"

namespace tinytcp::net {

const char* to_string(NeighborState s) {
  switch (s) {
    case NeighborState::Incomplete:
      return "INCOMPLETE";
    case NeighborState::Reachable:
      return "REACHABLE";
    case NeighborState::Stale:
      return "STALE";
    case NeighborState::Delay:
      return "DELAY";
    case NeighborState::Probe:
      return "PROBE";
  }
  return "?";
}

const char* to_string(NdpCacheDrop d) {
  switch (d) {
    case NdpCacheDrop::QueueFull:
      return "neighbor queue full: oldest packet dropped";
    case NdpCacheDrop::TableFull:
      return "neighbor cache full";
    case NdpCacheDrop::ResolutionFailed:
      return "neighbor did not answer: packet dropped";
    case NdpCacheDrop::UnknownAdvertised:
      return "advertisement for an address not in the cache";
    case NdpCacheDrop::NoLinkLayer:
      return "advertisement without link-layer address for an INCOMPLETE entry";
    case NdpCacheDrop::kCount:
      break;
  }
  return "?";
}

NdpCache::NdpCache(const Config& config, Output& out) : config_(config), out_(out) {
  TINYTCP_CHECK(config_.max_entries > 0);
  size_t table = 8;
  while (table * 3 < config_.max_entries * 4) {
    table *= 2;
  }
  slots_.resize(table);
  mask_ = table - 1;
}

void NdpCache::drop(NdpCacheDrop why, uint64_t n) {
  stats_.drops.count(why, n);
  SPDLOG_DEBUG("ndp: drop: {}", to_string(why));
}

size_t NdpCache::home(const wire::Ipv6Address& ip) const {
  uint64_t a = 0;
  uint64_t b = 0;
  std::memcpy(&a, ip.bytes.data(), 8);
  std::memcpy(&b, ip.bytes.data() + 8, 8);
  const uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15u)) * 0xbf58476d1ce4e5b9u;
  return static_cast<size_t>(h >> 32) & mask_;
}

size_t NdpCache::find(const wire::Ipv6Address& ip) const {
  size_t i = home(ip);
  // At most 3/4 full, so the probe ends.
  while (slots_[i].used && slots_[i].ip != ip) {
    i = (i + 1) & mask_;
  }
  return i;
}

NdpCache::Entry* NdpCache::lookup(const wire::Ipv6Address& ip) {
  Entry& e = slots_[find(ip)];
  return e.used ? &e : nullptr;
}

NdpCache::Entry* NdpCache::insert(const wire::Ipv6Address& ip, Instant now) {
  if (size_ >= config_.max_entries) {
    // Reclaim one STALE entry (it holds no packets and no timer).
    size_t victim = slots_.size();
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].used && effective_state(slots_[i], now) == NeighborState::Stale) {
        victim = i;
        break;
      }
    }
    if (victim == slots_.size()) {
      return nullptr;
    }
    remove(victim);
  }
  Entry& e = slots_[find(ip)];
  e = Entry{};
  e.used = true;
  e.ip = ip;
  ++size_;
  return &e;
}

void NdpCache::remove(size_t slot) {
  slots_[slot] = Entry{};
  --size_;
  // Backward-shift deletion: pull later entries of the probe run into the
  // hole unless their home lies cyclically in (hole, their slot].
  size_t hole = slot;
  size_t j = slot;
  while (true) {
    j = (j + 1) & mask_;
    if (!slots_[j].used) {
      return;
    }
    const size_t k = home(slots_[j].ip);
    const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (!stays) {
      slots_[hole] = std::move(slots_[j]);
      slots_[j] = Entry{};
      hole = j;
    }
  }
}

NeighborState NdpCache::effective_state(const Entry& e, Instant now) {
  // RFC 4861 §7.3.3: REACHABLE turns STALE reachable_time after the last
  // confirmation; done lazily, so REACHABLE needs no timer.
  if (e.state == NeighborState::Reachable && now >= e.deadline) {
    return NeighborState::Stale;
  }
  return e.state;
}

void NdpCache::arm(Entry& e, Instant deadline) {
  e.deadline = deadline;
  if (!next_deadline_ || deadline < *next_deadline_) {
    next_deadline_ = deadline;
  }
}

void NdpCache::set_reachable(Entry& e, Instant now) {
  e.state = NeighborState::Reachable;
  e.deadline = now + config_.reachable_time;
  e.solicitations = 0;
}

void NdpCache::set_link_layer_and_flush(Entry& e, const wire::MacAddress& mac, NeighborState state,
                                        Instant now) {
  e.mac = mac;
  if (state == NeighborState::Reachable) {
    set_reachable(e, now);
  } else {
    e.state = state;
    e.solicitations = 0;
  }
  ++stats_.resolved;
  // The queue leaves the entry before any output, which may re-enter.
  std::deque<std::string> queue;
  queue.swap(e.queue);
  e.queue_bytes = 0;
  for (const auto& packet : queue) {
    ++stats_.packets_sent;
    out_.send_packet(mac, packet);
  }
}

void NdpCache::send(const wire::Ipv6Address& next_hop, std::string_view packet, Instant now) {
  Entry* e = lookup(next_hop);
  const bool created = e == nullptr;
  if (created) {
    e = insert(next_hop, now);
    if (e == nullptr) {
      drop(NdpCacheDrop::TableFull);
      return;
    }
    // §7.2.2: create INCOMPLETE, queue the packet, solicit.
    e->state = NeighborState::Incomplete;
    e->solicitations = 1;
    arm(*e, now + config_.retrans_timer);
  } else {
    const NeighborState s = effective_state(*e, now);
    if (s != NeighborState::Incomplete) {
      if (s == NeighborState::Stale) {
        // §7.3.3: the first packet to a STALE neighbor starts DELAY.
        e->state = NeighborState::Delay;
        e->solicitations = 0;
        arm(*e, now + config_.delay_first_probe);
      }
      ++stats_.packets_sent;
      out_.send_packet(e->mac, packet);
      return;
    }
  }
  // §7.2.2: when the queue overflows, the oldest packet goes.
  while (!e->queue.empty() && (e->queue.size() >= config_.queue_packets ||
                               e->queue_bytes + packet.size() > config_.queue_bytes)) {
    e->queue_bytes -= e->queue.front().size();
    e->queue.pop_front();
    drop(NdpCacheDrop::QueueFull);
  }
  if (config_.queue_packets == 0 || packet.size() > config_.queue_bytes) {
    drop(NdpCacheDrop::QueueFull);
  } else {
    e->queue.emplace_back(packet);
    e->queue_bytes += packet.size();
    ++stats_.packets_queued;
  }
  if (created) {
    ++stats_.multicast_solicitations;
    out_.send_solicitation(next_hop, nullptr);
  }
}

void NdpCache::on_advertisement(const wire::NeighborAdvertisement& na, Instant now) {
  Entry* e = lookup(na.target);
  if (e == nullptr) {
    drop(NdpCacheDrop::UnknownAdvertised);  // §7.2.5: silently discarded
    return;
  }
  const NeighborState s = effective_state(*e, now);
  if (s == NeighborState::Incomplete) {
    if (!na.target_link_layer) {
      drop(NdpCacheDrop::NoLinkLayer);
      return;
    }
    set_link_layer_and_flush(*e, *na.target_link_layer,
                             na.solicited ? NeighborState::Reachable : NeighborState::Stale, now);
    return;
  }
  e->state = s;  // a lapsed REACHABLE is STALE from here on
  const bool different = na.target_link_layer && *na.target_link_layer != e->mac;
  if (!na.override_flag && different) {
    // Appendix C: a different address without override only demotes REACHABLE.
    if (s == NeighborState::Reachable) {
      e->state = NeighborState::Stale;
    }
    return;
  }
  if (na.target_link_layer) {
    e->mac = *na.target_link_layer;
  }
  if (na.solicited) {
    set_reachable(*e, now);
  } else if (different) {
    e->state = NeighborState::Stale;
    e->solicitations = 0;
  }
}

void NdpCache::on_link_layer_address(const wire::Ipv6Address& ip, const wire::MacAddress& mac,
                                     Instant now) {
  Entry* e = lookup(ip);
  if (e == nullptr) {
    // §7.2.3: create it STALE.
    e = insert(ip, now);
    if (e == nullptr) {
      drop(NdpCacheDrop::TableFull);
      return;
    }
    e->state = NeighborState::Stale;
    e->mac = mac;
    return;
  }
  const NeighborState s = effective_state(*e, now);
  if (s == NeighborState::Incomplete) {
    set_link_layer_and_flush(*e, mac, NeighborState::Stale, now);
    return;
  }
  e->state = s;
  if (mac != e->mac) {
    e->mac = mac;
    e->state = NeighborState::Stale;
    e->solicitations = 0;
  }
}

void NdpCache::confirm_reachable(const wire::Ipv6Address& ip, Instant now) {
  Entry* e = lookup(ip);
  if (e != nullptr && e->state != NeighborState::Incomplete) {
    set_reachable(*e, now);
  }
}

void NdpCache::tick(Instant now) {
  if (!next_deadline_ || now < *next_deadline_) {
    return;
  }
  next_deadline_.reset();
  for (size_t i = 0; i < slots_.size();) {
    Entry& e = slots_[i];
    const bool timed =
        e.used && (e.state == NeighborState::Incomplete || e.state == NeighborState::Delay ||
                   e.state == NeighborState::Probe);
    if (!timed) {
      ++i;
      continue;
    }
    if (e.deadline > now) {
      arm(e, e.deadline);
      ++i;
      continue;
    }
    const wire::Ipv6Address ip = e.ip;
    if (e.state == NeighborState::Delay) {
      // §7.3.3: no confirmation during DELAY: PROBE with a unicast solicitation.
      e.state = NeighborState::Probe;
      e.solicitations = 1;
      arm(e, now + config_.retrans_timer);
      const wire::MacAddress mac = e.mac;
      ++stats_.unicast_solicitations;
      out_.send_solicitation(ip, &mac);
      ++i;
      continue;
    }
    const bool incomplete = e.state == NeighborState::Incomplete;
    const unsigned limit = incomplete ? config_.max_multicast_solicit : config_.max_unicast_solicit;
    if (e.solicitations < limit) {
      ++e.solicitations;
      arm(e, now + config_.retrans_timer);
      const wire::MacAddress mac = e.mac;
      if (incomplete) {
        ++stats_.multicast_solicitations;
        out_.send_solicitation(ip, nullptr);
      } else {
        ++stats_.unicast_solicitations;
        out_.send_solicitation(ip, &mac);
      }
      ++i;
      continue;
    }
    // §7.2.2, §7.3.3: unanswered: the entry goes, and its waiting packets.
    std::deque<std::string> queue;
    queue.swap(e.queue);
    ++stats_.unreachable;
    remove(i);  // may pull a later entry into slot i: look at it again
    if (!queue.empty()) {
      drop(NdpCacheDrop::ResolutionFailed, queue.size());
    }
    for (const auto& packet : queue) {
      out_.on_unreachable(ip, packet);
    }
  }
}

std::optional<Instant> NdpCache::next_deadline() const {
  return next_deadline_;
}

std::optional<NeighborState> NdpCache::state(const wire::Ipv6Address& ip, Instant now) const {
  const Entry& e = slots_[find(ip)];
  if (!e.used) {
    return std::nullopt;
  }
  return effective_state(e, now);
}

const wire::MacAddress* NdpCache::link_layer_address(const wire::Ipv6Address& ip) const {
  const Entry& e = slots_[find(ip)];
  return e.used && e.state != NeighborState::Incomplete ? &e.mac : nullptr;
}

size_t NdpCache::queued_packets(const wire::Ipv6Address& ip) const {
  const Entry& e = slots_[find(ip)];
  return e.used ? e.queue.size() : 0;
}

}  // namespace tinytcp::net

#include "net/arp_cache.hh"

#include "util/check.hh"

namespace tinytcp::net {

ArpCache::ArpCache(const Config& config) : config_(config) {
  TINYTCP_CHECK(config_.max_entries > 0);
  size_t table = 8;
  unsigned bits = 3;
  while (table * 3 < config_.max_entries * 4) {
    table *= 2;
    ++bits;
  }
  slots_.resize(table);
  spare_.resize(table);
  mask_ = table - 1;
  shift_ = 32 - bits;
}

size_t ArpCache::find(uint32_t ip) const {
  size_t i = home(ip);
  // The table is never full (at most 3/4), so the probe ends.
  while (slots_[i].state != State::kEmpty && slots_[i].ip != ip) {
    i = (i + 1) & mask_;
  }
  return i;
}

const wire::MacAddress* ArpCache::lookup(wire::Ipv4Address ip, Instant now) const {
  const Slot& s = slots_[find(ip.value)];
  if (s.state != State::kResolved || stale(s, now)) {
    return nullptr;
  }
  return &s.mac;
}

bool ArpCache::contains(wire::Ipv4Address ip, Instant now) const {
  const Slot& s = slots_[find(ip.value)];
  return s.state != State::kEmpty && !stale(s, now);
}

ArpCache::Slot* ArpCache::slot_for_insert(uint32_t ip, Instant now) {
  size_t i = find(ip);
  if (slots_[i].state != State::kEmpty) {
    return &slots_[i];
  }
  if (size_ >= config_.max_entries) {
    expire(now);
    if (size_ >= config_.max_entries) {
      return nullptr;
    }
    i = find(ip);
  }
  ++size_;
  slots_[i].ip = ip;
  return &slots_[i];
}

bool ArpCache::learn(wire::Ipv4Address ip, const wire::MacAddress& mac, Instant now) {
  Slot* s = slot_for_insert(ip.value, now);
  if (s == nullptr) {
    return false;
  }
  s->state = State::kResolved;
  s->mac = mac;
  s->deadline = now + config_.entry_lifetime;
  return true;
}

ArpCache::Miss ArpCache::on_miss(wire::Ipv4Address ip, Instant now) {
  Slot* s = slot_for_insert(ip.value, now);
  if (s == nullptr) {
    return Miss::TableFull;
  }
  if (s->state == State::kPending && !stale(*s, now)) {
    return Miss::AlreadyRequested;
  }
  // New, expired, or a request that went unanswered for request_interval.
  s->state = State::kPending;
  s->deadline = now + config_.request_interval;
  return Miss::SendRequest;
}

void ArpCache::expire(Instant now) {
  for (auto& s : spare_) {
    s.state = State::kEmpty;
  }
  std::swap(slots_, spare_);
  size_ = 0;
  for (const auto& s : spare_) {
    if (s.state != State::kEmpty && !stale(s, now)) {
      slots_[find(s.ip)] = s;
      ++size_;
    }
  }
}

}  // namespace tinytcp::net

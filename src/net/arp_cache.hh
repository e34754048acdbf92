#pragma once

// ArpCache: the IPv4 -> MAC table of one NetworkInterface (RFC 826), with the
// timing of issue #4: a learned mapping lives 30 s, and a request for an
// address is not repeated within 5 s. It knows nothing about frames; the
// interface asks it what to do.
//
// Storage is an open-addressing hash table (linear probing) allocated once:
// `max_entries` entries in a power-of-two table at most 3/4 full, so lookups
// and inserts never allocate and a miss costs one or two cache lines. Stale
// entries are not removed when they age; they read as absent and are reclaimed
// in one sweep when the table is full (or by expire()).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/time.hh"
#include "wire/ethernet.hh"
#include "wire/ipv4.hh"

namespace tinytcp::net {

class ArpCache {
 public:
  struct Config {
    size_t max_entries = 4096;
    Duration entry_lifetime = std::chrono::seconds(30);
    Duration request_interval = std::chrono::seconds(5);
  };

  enum class Miss {
    SendRequest,       // no request in the last request_interval: send one now
    AlreadyRequested,  // a request is outstanding: wait for its reply
    TableFull,         // no room even after reclaiming stale entries
  };

  explicit ArpCache(const Config& config);

  // The MAC of `ip` if learned within entry_lifetime; nullptr otherwise.
  const wire::MacAddress* lookup(wire::Ipv4Address ip, Instant now) const;
  // Records ip -> mac, valid until now + entry_lifetime. False if the table is
  // full of fresh entries.
  bool learn(wire::Ipv4Address ip, const wire::MacAddress& mac, Instant now);
  // True if `ip` has an entry (fresh or not): RFC 826's "merge" test.
  bool contains(wire::Ipv4Address ip, Instant now) const;
  // `ip` is unresolved and someone wants to send to it.
  Miss on_miss(wire::Ipv4Address ip, Instant now);
  // Starts loading the slot of `ip` into the cache (a hint, no effect on
  // state): a miss on a large table costs a memory round trip, which the
  // caller can overlap with other work.
  void prefetch(wire::Ipv4Address ip) const { __builtin_prefetch(&slots_[home(ip.value)]); }
  // Reclaims every stale entry: O(table size).
  void expire(Instant now);

  size_t size() const { return size_; }
  size_t max_entries() const { return config_.max_entries; }

 private:
  enum class State : uint8_t { kEmpty, kResolved, kPending };
  struct Slot {
    uint32_t ip = 0;
    State state = State::kEmpty;
    wire::MacAddress mac;
    Instant deadline;  // resolved: expiry; pending: when a new request may go out
  };

  size_t home(uint32_t ip) const {
    return static_cast<size_t>((ip * 0x9e3779b1u) >> shift_) & mask_;
  }
  // The slot holding `ip`, or the empty slot where it would go.
  size_t find(uint32_t ip) const;
  // Finds or makes the slot for `ip`; nullptr when the table is full.
  Slot* slot_for_insert(uint32_t ip, Instant now);
  static bool stale(const Slot& s, Instant now) { return now >= s.deadline; }

  Config config_;
  std::vector<Slot> slots_;
  std::vector<Slot> spare_;  // the sweep rebuilds into it, then swaps
  size_t mask_ = 0;
  unsigned shift_ = 0;
  size_t size_ = 0;
};

}  // namespace tinytcp::net

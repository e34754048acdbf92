#pragma once

// NdpCache: the neighbor cache of one IPv6 interface (RFC 4861 §7.3), the
// IPv6 counterpart of ArpCache with the queue of waiting packets inside it.
// Each neighbor is in one of RFC 4861's states:
//
//   INCOMPLETE  resolving: multicast solicitations every retrans_timer, at
//               most max_multicast_solicit, packets queued; then the entry
//               and its packets go (each reported for an ICMPv6 Destination
//               Unreachable, code 3, RFC 4861 §7.2.2)
//   REACHABLE   confirmed within reachable_time (by a solicited advertisement
//               or an upper-layer hint); after it, STALE
//   STALE       an address heard without confirmation; sending to it moves it
//               to DELAY
//   DELAY       waits delay_first_probe for an upper-layer hint, then PROBE
//   PROBE       unicast solicitations every retrans_timer, at most
//               max_unicast_solicit, then the entry goes
//
// Transitions follow RFC 4861 Appendix C. The cache knows no frames: what it
// sends goes out through an Output (a packet to a resolved link-layer
// address, a solicitation to build, a packet that could not be delivered);
// the interface builds the NDP and Ethernet bytes. Time is passed in;
// REACHABLE ages lazily (no timer), the others report next_deadline().
//
// Storage: an open-addressing table (linear probing, backward-shift delete)
// allocated once for max_entries at most 3/4 full. Each INCOMPLETE neighbor
// queues at most queue_packets packets and queue_bytes bytes; the oldest goes
// first when full (§7.2.2). A full table reclaims a STALE entry, else refuses.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/counters.hh"
#include "util/time.hh"
#include "wire/ethernet.hh"
#include "wire/ipv6.hh"
#include "wire/ndp.hh"

namespace tinytcp::net {

enum class NeighborState : uint8_t { Incomplete, Reachable, Stale, Delay, Probe };
const char* to_string(NeighborState s);

enum class NdpCacheDrop {
  QueueFull,          // the oldest waiting packet gave way to a new one
  TableFull,          // no room for a neighbor, even after reclaiming a STALE one
  ResolutionFailed,   // a waiting packet whose neighbor never answered
  UnknownAdvertised,  // an advertisement for an address with no entry (§7.2.5)
  NoLinkLayer,        // an advertisement to an INCOMPLETE entry without TLL
  kCount
};
const char* to_string(NdpCacheDrop d);

struct NdpCacheStats {
  EnumCounters<NdpCacheDrop> drops;
  uint64_t multicast_solicitations = 0;  // INCOMPLETE, first and retransmitted
  uint64_t unicast_solicitations = 0;    // PROBE
  uint64_t packets_sent = 0;             // at once or after resolution
  uint64_t packets_queued = 0;
  uint64_t resolved = 0;     // INCOMPLETE entries that got a link-layer address
  uint64_t unreachable = 0;  // entries deleted after their solicitations went unanswered
};

class NdpCache {
 public:
  // RFC 4861 §10 protocol constants as defaults (REACHABLE_TIME is the base;
  // the owner randomizes it per §6.3.2 when it makes the cache).
  struct Config {
    size_t max_entries = 1024;
    size_t queue_packets = 16;
    size_t queue_bytes = 64 * 1024;
    Duration reachable_time = std::chrono::seconds(30);
    Duration retrans_timer = std::chrono::seconds(1);
    Duration delay_first_probe = std::chrono::seconds(5);
    unsigned max_multicast_solicit = 3;
    unsigned max_unicast_solicit = 3;
  };

  class Output {
   public:
    virtual ~Output() = default;
    virtual void send_packet(const wire::MacAddress& dst, std::string_view packet) = 0;
    // A neighbor solicitation for `target`: multicast to its solicited-node
    // group when `unicast_to` is null, else unicast to that address.
    virtual void send_solicitation(const wire::Ipv6Address& target,
                                   const wire::MacAddress* unicast_to) = 0;
    // A packet that waited for `target` in vain.
    virtual void on_unreachable(const wire::Ipv6Address& target, std::string_view packet) = 0;
  };

  NdpCache(const Config& config, Output& out);

  // Sends `packet` to the neighbor `next_hop`, resolving it first if needed.
  void send(const wire::Ipv6Address& next_hop, std::string_view packet, Instant now);
  // A neighbor advertisement that passed wire::parse_neighbor_advertisement.
  void on_advertisement(const wire::NeighborAdvertisement& na, Instant now);
  // A neighbor's link-layer address from its solicitation (source link-layer
  // option), router solicitation or advertisement, or a redirect.
  void on_link_layer_address(const wire::Ipv6Address& ip, const wire::MacAddress& mac, Instant now);
  // Forward progress from an upper layer (RFC 4861 §7.3.1): a TCP ACK for
  // new data from `ip` proves it reachable.
  void confirm_reachable(const wire::Ipv6Address& ip, Instant now);

  void tick(Instant now);
  // The earliest retransmission or DELAY timeout; nullopt when none is armed.
  std::optional<Instant> next_deadline() const;

  std::optional<NeighborState> state(const wire::Ipv6Address& ip, Instant now) const;
  const wire::MacAddress* link_layer_address(const wire::Ipv6Address& ip) const;
  size_t queued_packets(const wire::Ipv6Address& ip) const;
  size_t size() const { return size_; }
  const NdpCacheStats& stats() const { return stats_; }

 private:
  struct Entry {
    bool used = false;
    wire::Ipv6Address ip;
    NeighborState state = NeighborState::Incomplete;
    wire::MacAddress mac;
    Instant deadline;  // INCOMPLETE/PROBE: next solicitation; DELAY: probing; REACHABLE: stale
    unsigned solicitations = 0;  // sent in this state
    std::deque<std::string> queue;
    size_t queue_bytes = 0;
  };

  size_t home(const wire::Ipv6Address& ip) const;
  // The slot holding `ip`, or the empty slot where it would go.
  size_t find(const wire::Ipv6Address& ip) const;
  Entry* lookup(const wire::Ipv6Address& ip);
  Entry* insert(const wire::Ipv6Address& ip, Instant now);
  void remove(size_t slot);
  void arm(Entry& e, Instant deadline);
  void set_reachable(Entry& e, Instant now);
  void set_link_layer_and_flush(Entry& e, const wire::MacAddress& mac, NeighborState state,
                                Instant now);
  static NeighborState effective_state(const Entry& e, Instant now);
  void drop(NdpCacheDrop why, uint64_t n = 1);

  Config config_;
  Output& out_;
  std::vector<Entry> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  std::optional<Instant> next_deadline_;  // may be early (a timer since cancelled), never late
  NdpCacheStats stats_;
};

}  // namespace tinytcp::net

#pragma once

// NetworkInterface: IPv4 over Ethernet with ARP (RFC 826), sans-I/O. Above it
// a Router or Host hands it datagrams with the next hop's IPv4 address; below
// it a FrameSink takes the finished frames. Frames that come in are given to
// receive_frame(); IPv4 payloads go up to a DatagramSink, ARP is handled here.
//
// Resolution: a learned mapping lives 30 s; a miss queues the datagram and
// broadcasts a request, at most one per address per 5 s; queued datagrams go
// out when the reply arrives, or are dropped 5 s after they were queued. The
// queue holds at most `pending_datagrams` datagrams and `pending_bytes` bytes,
// packed back to back in one buffer allocated once (a 64-byte datagram takes
// 64 bytes); when either bound is reached the oldest datagram is dropped (and
// counted) to make room, as Linux does for its per-neighbour queue. The interface answers requests
// for its own address, learns from requests and replies addressed to it (and, per RFC 826's merge
// step, refreshes mappings it already has from any ARP), and announces itself with a gratuitous ARP
// (RFC 5227 §2.3) when started.
//
// Frames are built in one buffer owned by the interface: sending allocates
// nothing. Frames are not padded to the 60-byte Ethernet minimum; the device
// below (TAP) does that.
//
// IPv6 (issue 20) is on when the config names an IPv6 address: then the
// interface also takes EtherType 0x86dd frames sent to our MAC, broadcast, the
// all-nodes group or our solicited-node group, and its NeighborDiscovery
// (net/neighbor_discovery.hh) answers neighbor solicitations, resolves IPv6
// next hops with the NdpCache and detects a duplicate of our address. With no
// IPv6 address, IPv6 frames are dropped as before and nothing else changes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "net/arp_cache.hh"
#include "net/datagram_sink.hh"
#include "net/frame_sink.hh"
#include "net/link_offload.hh"
#include "net/ndp_cache.hh"
#include "net/neighbor_discovery.hh"
#include "util/counters.hh"
#include "util/random.hh"
#include "util/time.hh"
#include "wire/arp.hh"
#include "wire/ethernet.hh"
#include "wire/ipv4.hh"
#include "wire/ipv6.hh"

namespace tinytcp::net {

struct NetworkInterfaceConfig {
  wire::MacAddress mac;
  wire::Ipv4Address ip;
  uint16_t mtu = 1500;  // largest datagram, bytes
  // The FrameSink offloads (send_offloaded_frame): datagrams with a
  // LinkOffload go to it with their header, TCP GSO ones up to 64 KiB whole
  // (the Router checked that their segments fit the MTU).
  bool offload = false;
  ArpCache::Config arp;
  size_t pending_datagrams = 256;     // waiting for ARP, all next hops together
  size_t pending_bytes = 256 * 1024;  // their bytes; at least the MTU
  Duration pending_timeout = std::chrono::seconds(5);
  // IPv6: on when set (the MTU must then be at least 1280, and the owner
  // gives the constructor an Rng).
  std::optional<wire::Ipv6Address> ipv6;
  NdpCache::Config ndp;  // reachable_time is BaseReachableTime
  unsigned dad_transmits = 1;
};

// Why the interface dropped something (one counter each).
enum class InterfaceDrop {
  NotForUs,              // destination MAC neither ours nor broadcast
  UnknownEtherType,      // neither IPv4 nor ARP (nor IPv6, when it is on)
  NoUpperLayer,          // IPv4 arrived but no DatagramSink is set
  ArpNotForUs,           // ARP whose target address is not ours
  ArpFromInvalidSender,  // sender address ours, zero, broadcast or multicast
  ArpTableFull,          // could not record a mapping or a pending request
  DatagramTooBig,        // larger than the MTU (the layer above fragments)
  PendingEvicted,        // oldest waiting datagram dropped to make room
  PendingTimeout,        // no ARP reply within pending_timeout
  kCount
};
const char* to_string(InterfaceDrop d);

struct NetworkInterfaceStats {
  EnumCounters<wire::EthernetError> ethernet_errors;
  EnumCounters<wire::ArpError> arp_errors;
  EnumCounters<InterfaceDrop> drops;
  uint64_t frames_received = 0;
  uint64_t frames_sent = 0;
  uint64_t datagrams_sent = 0;       // handed to the sink, resolved at once or later
  uint64_t datagrams_delivered = 0;  // given to the DatagramSink
  uint64_t datagrams_queued = 0;     // waited for ARP
  uint64_t arp_requests_sent = 0;
  uint64_t arp_replies_sent = 0;
  uint64_t arp_learned = 0;
};

class NetworkInterface {
 public:
  // `rng` (needed when config.ipv6 is set) draws the IPv6 ReachableTime.
  NetworkInterface(const NetworkInterfaceConfig& config, FrameSink& out, Rng* rng = nullptr);
  NetworkInterface(const NetworkInterface&) = delete;
  NetworkInterface& operator=(const NetworkInterface&) = delete;

  // Where received datagrams go; unset, they are counted and dropped.
  void set_datagram_sink(DatagramSink* sink, size_t interface_index) {
    up_ = sink;
    index_ = interface_index;
  }

  // Announces our address (gratuitous ARP request) and starts duplicate
  // address detection of our IPv6 address.
  void start(Instant now);

  // Sends `datagram` (a whole IPv4 datagram) towards `next_hop`.
  void send_datagram(std::string_view datagram, wire::Ipv4Address next_hop, Instant now) {
    send_datagram(datagram, {}, next_hop, now);
  }
  // The same for a datagram held in two pieces (a rewritten header and the
  // rest), gathered into the frame without an intermediate copy. With
  // `offload` (only when config.offload is set; ignored otherwise) the frame
  // goes to the sink with it, also after waiting for ARP.
  void send_datagram(std::string_view head, std::string_view tail, wire::Ipv4Address next_hop,
                     Instant now, const LinkOffload* offload = nullptr);

  // Sends `datagram` (a whole IPv6 datagram) towards `next_hop` (a neighbor
  // or a multicast group). Dropped and counted when IPv6 is off.
  void send_ipv6_datagram(std::string_view datagram, const wire::Ipv6Address& next_hop,
                          Instant now);

  void receive_frame(std::string_view frame, Instant now);

  // A hint that a datagram for `next_hop` is coming: see ArpCache::prefetch.
  void prefetch_next_hop(wire::Ipv4Address next_hop) const { arp_.prefetch(next_hop); }

  // Drops datagrams that waited too long for ARP; runs the IPv6 timers.
  void tick(Instant now);
  // When tick() next has work: the oldest waiting datagram's timeout, or an
  // IPv6 neighbor or DAD timer.
  std::optional<Instant> next_deadline() const;

  const NetworkInterfaceConfig& config() const { return config_; }
  wire::Ipv4Address ip() const { return config_.ip; }
  const wire::MacAddress& mac() const { return config_.mac; }
  uint16_t mtu() const { return config_.mtu; }
  const NetworkInterfaceStats& stats() const { return stats_; }
  const ArpCache& arp_cache() const { return arp_; }
  size_t pending_datagrams() const { return pending_live_; }
  // The IPv6 side; null when IPv6 is off.
  const NeighborDiscovery* neighbor_discovery() const { return nd_ ? &*nd_ : nullptr; }
  NeighborDiscovery* neighbor_discovery() { return nd_ ? &*nd_ : nullptr; }

 private:
  struct Pending {
    wire::Ipv4Address next_hop;
    uint32_t offset = 0;  // in pending_bytes_
    uint32_t length = 0;
    Instant queued_at;
    bool live = false;
    bool offloaded = false;
    LinkOffload offload;
  };

  void drop(InterfaceDrop why);
  void handle_ipv6(std::string_view payload, bool link_multicast, Instant now);
  void handle_arp(std::string_view payload, Instant now);
  void send_arp(wire::ArpOpcode opcode, const wire::MacAddress& dst_mac,
                const wire::MacAddress& target_mac, wire::Ipv4Address target_ip);
  void send_arp_request(wire::Ipv4Address target);
  void send_ipv4_frame(const wire::MacAddress& dst, std::string_view head, std::string_view tail,
                       const LinkOffload* offload);
  void enqueue(std::string_view head, std::string_view tail, wire::Ipv4Address next_hop,
               Instant now, const LinkOffload* offload);
  void flush_pending(wire::Ipv4Address ip, const wire::MacAddress& mac);
  void trim_pending_head();
  void evict_pending_head(InterfaceDrop why);
  // Ring arithmetic without division (the ring size need not be a power of 2).
  size_t next_slot(size_t slot) const { return slot + 1 == pending_.size() ? 0 : slot + 1; }
  size_t slot_at(size_t i) const {
    const size_t slot = pending_head_ + i;
    return slot >= pending_.size() ? slot - pending_.size() : slot;
  }

  NetworkInterfaceConfig config_;
  FrameSink& out_;
  DatagramSink* up_ = nullptr;
  size_t index_ = 0;
  ArpCache arp_;
  std::vector<char> frame_;  // the frame being built
  std::array<char, wire::EthernetHeader::kSize + wire::ArpMessage::kSize> request_template_{};
  std::vector<Pending> pending_;
  std::vector<char> pending_bytes_;
  size_t pending_head_ = 0;
  size_t pending_count_ = 0;  // ring occupancy, live or not
  size_t pending_live_ = 0;
  size_t pending_write_ = 0;  // where the next datagram's bytes go
  std::optional<NeighborDiscovery> nd_;
  NetworkInterfaceStats stats_;
};

}  // namespace tinytcp::net

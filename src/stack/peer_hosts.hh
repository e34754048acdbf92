#pragma once

// PeerHosts: one Host per peer of a many-peer link (the UDP tunnel's
// listening side), so tunnel datagrams from different peers never mix, even
// when their inner addresses and ports are the same: each peer has its own
// address space, connections, ports, timers and TIME-WAIT table. Sans-I/O:
// datagrams come in tagged with the peer they came from (an outer address
// and port), leave through the Output callback with the same tag, and time
// is passed in.
//
// Admission: only a valid TCP SYN (IPv4 and TCP checksums, to our address,
// to a listening port, no ACK) from an unknown peer creates one; anything
// else from an unknown peer is dropped and counted with no state kept, so
// spoofed garbage allocates nothing. The table is bounded. While fewer than
// `max_embryonic` peers are in their first handshake, a SYN creates a peer
// at once. Past that (a flood of spoofed SYNs) the SYN-cookie idea moves up a
// layer: a gate Host, which keeps no state, answers the SYN with a cookie
// SYN-ACK (RFC 4987 §3.6), and only the ACK that returns a valid cookie from
// that peer creates it, with a Host that shares the gate's secret and so
// accepts the cookie. A spoofed SYN then costs nothing, and a real peer gets
// in however fast the flood. An embryonic peer is evicted, oldest first, to
// make room for a peer that completed its handshake, and after
// `handshake_timeout`; a peer with a completed connection is never evicted
// (a full table of them refuses new peers, counted). A peer whose connections are all gone (closed,
// or only in TIME-WAIT) is forgotten after `linger` without datagrams; a late segment from it is
// then dropped as from an unknown peer, and a new SYN starts over.
//
// Memory per peer is bounded by its Host's configuration (max_sockets,
// max_time_wait, the TCP buffers): `host` below.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "stack/host.hh"
#include "stack/ip_address.hh"
#include "tcp/syn_cookie.hh"
#include "util/counters.hh"
#include "util/time.hh"

namespace tinytcp::stack {

// Where a peer's datagrams come from: an outer address (IPv4 or IPv6: the
// outer family is independent of the inner one) and port.
struct PeerKey {
  IpAddress address;
  uint16_t port = 0;
  friend bool operator==(const PeerKey& a, const PeerKey& b) {
    return a.address == b.address && a.port == b.port;
  }
  friend bool operator!=(const PeerKey& a, const PeerKey& b) { return !(a == b); }
  friend bool operator<(const PeerKey& a, const PeerKey& b) {
    return a.address != b.address ? a.address < b.address : a.port < b.port;
  }
  std::string to_string() const;  // "a.b.c.d:port" or "[IPv6]:port"
};

struct PeerKeyHash {
  size_t operator()(const PeerKey& k) const {
    uint64_t h = (uint64_t{k.address.mix()} << 16 | k.port) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    return static_cast<size_t>(h);
  }
};

using PeerId = uint64_t;  // never reused; 0 is no peer

struct PeerHostsConfig {
  HostConfig host;              // each peer's Host (its address, TCP, per-peer limits)
  std::vector<uint16_t> ports;  // listening ports; a SYN to another creates no peer
  size_t backlog = 4;           // per peer and port
  size_t max_peers = 1024;
  size_t max_embryonic = 256;  // peers whose first handshake has not completed
  Duration handshake_timeout = std::chrono::seconds(10);
  Duration linger = std::chrono::seconds(2);  // quiet time before a finished peer goes
  // Past max_embryonic, answer SYNs with cookies (above); off, the oldest
  // embryonic peer is evicted for each new SYN instead.
  bool syn_cookies = true;
};

enum class PeerDrop {
  BadDatagram,   // from an unknown peer: not IPv4 with a valid TCP segment
  NotForUs,      // from an unknown peer: another destination address
  NotSyn,        // from an unknown peer: not a SYN (or SYN with ACK, RST or FIN)
  NotListening,  // from an unknown peer: SYN to a port nobody listens on
  BadCookie,     // from an unknown peer: an ACK that returns no valid cookie of ours
  PeersFull,     // a new peer while max_peers have completed handshakes
  kCount,
};
const char* to_string(PeerDrop d);

struct PeerHostsStats {
  uint64_t peers_created = 0;
  uint64_t cookies_sent = 0;       // SYNs the gate answered (no peer created)
  uint64_t cookie_peers = 0;       // peers created by a returning cookie
  uint64_t embryonic_evicted = 0;  // to make room for a new peer
  uint64_t handshake_timeouts = 0;
  uint64_t peers_finished = 0;  // connections all gone, forgotten after `linger`
  EnumCounters<PeerDrop> drops;
};

class PeerHosts {
 public:
  using Output = std::function<void(PeerId, const PeerKey&, std::string_view datagram)>;

  struct Accepted {
    PeerId peer = 0;
    PeerKey key;
    SocketId socket = 0;
  };

  // Throws std::invalid_argument when a port cannot be listened on.
  PeerHosts(PeerHostsConfig config, Output output);
  ~PeerHosts();
  PeerHosts(const PeerHosts&) = delete;
  PeerHosts& operator=(const PeerHosts&) = delete;

  void receive(const PeerKey& from, std::string_view datagram, Instant now);
  void tick(Instant now);
  std::optional<Instant> next_deadline() const;
  // A datagram to `to` the socket would not take (ENOBUFS, EAGAIN): to that
  // peer's Host (Host::on_send_failed), if the peer is still there.
  void on_send_failed(const PeerKey& to, std::string_view datagram, Instant now);

  // A connection that completed its handshake on a listening port, if any.
  std::optional<Accepted> accept();
  // The peer's Host; null once the peer is gone (evicted or finished).
  Host* host(PeerId peer);

  size_t size() const { return peers_.size(); }
  size_t embryonic() const { return embryonic_count_; }
  const PeerHostsStats& stats() const { return stats_; }
  const PeerHostsConfig& config() const { return config_; }

 private:
  struct Peer;
  void on_unknown(const PeerKey& from, std::string_view datagram, Instant now);
  // Evicts embryonic peers until a peer fits (`for_embryonic`: within
  // max_embryonic too); false when only completed peers are left.
  bool make_room(bool for_embryonic);
  Peer* create(const PeerKey& from, const std::string& secret, Instant now);
  void erase(PeerId peer);
  void update_embryonic(Peer& peer);
  void sweep(Instant now);

  PeerHostsConfig config_;
  Output output_;
  std::unordered_map<PeerKey, PeerId, PeerKeyHash> by_key_;
  std::unordered_map<PeerId, std::unique_ptr<Peer>> peers_;
  std::deque<PeerId> embryonic_order_;  // creation order; stale ids skipped
  size_t embryonic_count_ = 0;
  std::deque<std::pair<PeerId, SocketId>> acceptable_;  // (peer, listener) with a connection
  PeerId next_id_ = 1;
  // The cookie gate: a Host with one secret that answers every SYN with a
  // cookie, its output addressed to `gate_peer_`, and the same cookies kept
  // here to check a returning ACK before anything is allocated for it.
  std::string gate_secret_;
  std::unique_ptr<Host> gate_;
  std::unique_ptr<tcp::SynCookies> cookies_;
  PeerKey gate_peer_;
  std::optional<Instant> last_cookie_;  // when the gate last answered a SYN
  std::optional<Instant> next_sweep_;
  PeerHostsStats stats_;
};

}  // namespace tinytcp::stack

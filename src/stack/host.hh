#pragma once

// Host: one IPv4 address's worth of TCP/IP. It takes whole IPv4 datagrams in
// (from a TUN device, the ARP interface over TAP, or the UDP tunnel), answers
// ping, refuses UDP with ICMP port unreachable and unknown protocols with
// protocol unreachable, reassembles fragments, and demultiplexes TCP segments
// by 4-tuple to TcpConnections, creating them for listeners (bounded SYN and
// accept backlogs) and answering segments for no connection with a RST
// (RFC 9293 §3.10.7.1). Datagrams leave through the Output callback.
//
// On top it offers a socket-like API by SocketId: connect (RFC 6056 ephemeral
// ports), listen/accept, read/write, shutdown_write, close, abort, with an
// event callback for readiness so an event loop can drive apps. Sans-I/O like
// the layers below: every call takes `now`, and next_deadline() says when
// tick() is due. Events are queued and delivered at the end of each call, so
// a callback may call back into the Host.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/icmp_responder.hh"
#include "net/ipv4_reassembler.hh"
#include "stack/datagram_codec.hh"
#include "stack/four_tuple.hh"
#include "stack/port_allocator.hh"
#include "stack/time_wait_table.hh"
#include "tcp/isn.hh"
#include "tcp/syn_cookie.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_connection.hh"
#include "util/counters.hh"
#include "util/expected.hh"
#include "util/time.hh"
#include "wire/ipv4.hh"

namespace tinytcp::stack {

using SocketId = uint32_t;  // 0 is never a socket

struct HostConfig {
  wire::Ipv4Address address;
  tcp::TcpConfig tcp;
  size_t max_sockets = 4096;  // connections and listeners together
  // Connections in TIME-WAIT that no application holds, kept compactly
  // (TimeWaitTable) outside max_sockets. Past this many, a connection closes
  // without TIME-WAIT (counted), as Linux past tcp_max_tw_buckets.
  size_t max_time_wait = 262144;
  // Least time between two ACKs a TIME-WAIT entry sends to segments without
  // data (Linux's tcp_invalid_ratelimit).
  Duration time_wait_ack_interval = std::chrono::milliseconds(500);
  size_t default_backlog = 128;
  // RFC 4987 §3.6: when a listener's SYN queue is full, answer SYNs with a
  // cookie instead of dropping them (tcp::SynCookies).
  bool syn_cookies = true;
  uint8_t ttl = 64;
  std::string secret;  // >= 16 bytes for ISNs and ports; empty: fresh random bytes
  net::IcmpResponder::Config icmp;
  net::Ipv4Reassembler::Config reassembly;
};

enum class SocketError {
  NotFound,      // no such socket
  AddressInUse,  // a listener already has the port
  NoPortsFree,   // every ephemeral port to that peer is taken
  TooManySockets,
  NotListener,
  BadAddress,  // connect to a zero, broadcast or multicast address, or port 0
  kCount,
};
const char* to_string(SocketError e);

// Datagrams the Host dropped, one counter each.
enum class HostDrop {
  BadIpv4,     // failed IPv4 parsing (truncated, checksum, ...)
  NotForUs,    // destination is not our address
  BadTcp,      // failed TCP parsing (checksum, options, ...)
  BadAddress,  // TCP from or to a non-unicast address
  BadIcmp,
  IcmpIgnored,      // ICMP other than echo request and fragmentation-needed
  IcmpStale,        // frag-needed quoting no connection, or data not in flight (RFC 5927)
  NoConnection,     // TCP for no connection or listener (answered with RST)
  SynBacklogFull,   // SYN while `backlog` are half-open and syn_cookies is off
  BadCookie,        // ACK for a listener that sent cookies, not a valid cookie (reset)
  AcceptQueueFull,  // handshake completed while `backlog` wait for accept() (reset)
  SocketLimit,      // SYN while max_sockets exist
  kCount,
};
const char* to_string(HostDrop d);

struct HostStats {
  uint64_t datagrams_in = 0;
  uint64_t datagrams_out = 0;
  uint64_t resets_sent = 0;  // for segments that found no connection
  uint64_t echo_replies = 0;
  uint64_t icmp_errors_sent = 0;
  uint64_t connections_opened = 0;  // active and passive, reaching ESTABLISHED
  uint64_t syn_cookies_sent = 0;
  uint64_t syn_cookies_accepted = 0;  // connections made from a returned cookie
  uint64_t path_mtu_updates = 0;      // frag-needed errors that checked out (RFC 1191)
  uint64_t time_wait_entered = 0;     // connections moved to the TIME-WAIT table
  uint64_t time_wait_overflow = 0;    // closed without TIME-WAIT: the table was full
  uint64_t time_wait_acks = 0;        // ACKs sent from TIME-WAIT entries
  uint64_t time_wait_reused = 0;      // new SYNs accepted in TIME-WAIT (RFC 6191)
  uint64_t time_wait_reset = 0;       // entries ended by a RST at RCV.NXT
  EnumCounters<HostDrop> drops;
};

enum class SocketEvent {
  Connected,   // an active open reached ESTABLISHED
  Acceptable,  // a listener has a connection for accept()
  Readable,    // bytes arrived, or the peer finished
  Writable,    // writable_bytes grew (space freed, data sent, or cwnd grew)
  Closed,      // the connection reached CLOSED (see info().close_reason)
};
const char* to_string(SocketEvent e);

struct SocketInfo {
  FourTuple tuple;
  tcp::TcpState state = tcp::TcpState::Closed;
  std::optional<tcp::CloseReason> close_reason;
  bool listener = false;
  uint64_t readable_bytes = 0;
  uint64_t writable_bytes = 0;  // what write() takes now (TcpConnection::writable_bytes)
  bool peer_finished = false;   // EOF: the peer's FIN arrived and every byte was read
};

class Host {
 public:
  using Output = std::function<void(std::string_view datagram)>;
  using EventCallback = std::function<void(SocketId, SocketEvent)>;

  Host(HostConfig config, Output output);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // Network side.
  void receive_datagram(std::string_view datagram, Instant now);
  void tick(Instant now);
  std::optional<Instant> next_deadline() const;

  // Socket API.
  Expected<SocketId, SocketError> connect(wire::Ipv4Address remote, uint16_t port, Instant now);
  Expected<SocketId, SocketError> listen(uint16_t port, size_t backlog = 0);
  // A connection that completed its handshake on `listener`, if any.
  std::optional<SocketId> accept(SocketId listener);
  // Treats `listener` as having answered SYNs with cookies at `now`, so a
  // returning cookie ACK is accepted: for a Host created for a peer whose
  // SYN a gate Host with the same secret answered (PeerHosts).
  void expect_cookies(SocketId listener, Instant now);
  // Zero-copy read: a view of the next buffered bytes, then consume().
  std::string_view peek(SocketId id) const;
  void consume(SocketId id, size_t n, Instant now);
  // Copying read; returns the bytes read (0: nothing buffered, or EOF).
  size_t read(SocketId id, char* out, size_t n, Instant now);
  // Takes as much of `data` as TcpConnection::writable_bytes() allows (the
  // free send buffer, or less with send buffer autotuning); returns the count.
  size_t write(SocketId id, std::string_view data, Instant now);
  void shutdown_write(SocketId id, Instant now);
  // Graceful close: our FIN follows the data written; the socket id is
  // released at once and the connection lingers (TIME-WAIT) on its own. With
  // unread data, or before the handshake completed, it aborts instead.
  void close(SocketId id, Instant now);
  // RST (in a synchronized state) and release.
  void abort(SocketId id, Instant now);

  std::optional<SocketInfo> info(SocketId id) const;
  const tcp::TcpConnection* connection(SocketId id) const;
  void set_event_callback(EventCallback callback) { on_event_ = std::move(callback); }
  void set_trace(SocketId id, tcp::TcpSender::Trace trace);

  const HostConfig& config() const { return config_; }
  const HostStats& stats() const { return stats_; }
  const net::IcmpResponderStats& icmp_stats() const { return icmp_.stats(); }
  size_t socket_count() const { return sockets_.size(); }
  size_t connection_count() const { return by_tuple_.size(); }
  // Connections in TIME-WAIT that no application holds (not sockets).
  size_t time_wait_count() const { return time_wait_.size(); }

 private:
  struct Socket;
  struct Listener {
    uint16_t port = 0;
    size_t backlog = 0;
    size_t half_open = 0;
    std::deque<SocketId> ready;
    std::optional<Instant> last_cookie;  // when a SYN was last answered with a cookie
  };

  void on_ipv4(const wire::Ipv4View& ip, std::string_view bytes, Instant now);
  void on_tcp(const wire::Ipv4View& ip, Instant now);
  void on_icmp(const wire::Ipv4View& ip, Instant now);
  void on_fragmentation_needed(const wire::IcmpMessage& msg, Instant now);
  void send_error(uint8_t type, uint8_t code, const wire::Ipv4View& ip, std::string_view bytes,
                  Instant now);
  void send_reset(const InboundSegment& in);
  // A segment for a tuple in the TIME-WAIT table: answers it; true unless
  // it is a SYN accepted for a new connection (RFC 6191), whose ISN is then
  // in `isn`.
  bool on_time_wait(const InboundSegment& in, Instant now, std::optional<tcp::Wrap32>& isn);
  void on_listener_syn(Socket& listener, const InboundSegment& in, Instant now,
                       std::optional<tcp::Wrap32> isn = std::nullopt);
  void send_cookie_syn_ack(Listener& listener, const InboundSegment& in, Instant now);
  // An ACK for no connection on a listener's port that may carry a cookie:
  // true if it was taken (a connection made, or dropped and counted).
  bool on_cookie_ack(Socket& listener, const InboundSegment& in, Instant now);
  void emit(std::string_view datagram);
  void send_segment(const tcp::TcpSegment& segment, const FourTuple& tuple);

  Socket* find(SocketId id);
  const Socket* find(SocketId id) const;
  // A socket the application still holds (not closed by it).
  Socket* find_open(SocketId id);
  const Socket* find_open(SocketId id) const;
  // A connection socket; its ISN from the RFC 6528 generator unless given
  // (a SYN cookie).
  Socket& make_socket(const FourTuple& tuple, SocketId listener, Instant now,
                      std::optional<tcp::Wrap32> isn = std::nullopt);
  uint32_t timestamp_offset(const FourTuple& tuple) const;
  void transmit(SocketId id, const tcp::TcpSegment& segment);
  // After anything touched a connection: events, accept queue, timers, reclaim.
  void after_activity(SocketId id, Instant now);
  void schedule(Socket& s);
  void release(SocketId id);
  void queue_event(SocketId id, SocketEvent e);
  void dispatch_events();

  HostConfig config_;
  Output output_;
  EventCallback on_event_;
  tcp::IsnGenerator isn_;
  tcp::SynCookies cookies_;
  PortAllocator ports_;
  net::IcmpResponder icmp_;
  net::Ipv4Reassembler reassembler_;
  HostStats stats_;

  SocketId next_id_ = 1;
  std::unordered_map<SocketId, std::unique_ptr<Socket>> sockets_;
  std::unordered_map<FourTuple, SocketId, FourTupleHash> by_tuple_;
  std::unordered_map<uint16_t, SocketId> listener_by_port_;
  TimeWaitTable time_wait_;

  // Min-heap of (deadline, socket); stale entries are skipped lazily.
  using TimerEntry = std::pair<Instant, SocketId>;
  struct Later {
    bool operator()(const TimerEntry& a, const TimerEntry& b) const { return a.first > b.first; }
  };
  mutable std::priority_queue<TimerEntry, std::vector<TimerEntry>, Later> timers_;

  std::vector<std::pair<SocketId, SocketEvent>> events_;
  bool dispatching_ = false;
  std::vector<char> out_buffer_;
};

}  // namespace tinytcp::stack

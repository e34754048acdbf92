#pragma once

// Host: one IPv4 address's (and optionally one IPv6 address's) worth of
// TCP/IP. It takes whole IPv4 and IPv6 datagrams in (from a TUN device, the
// ARP/NDP interface over TAP, or the UDP tunnel; the IPv6 side is
// Ipv6Input), answers
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
#include "stack/address_fold.hh"
#include "stack/datagram_codec.hh"
#include "stack/four_tuple.hh"
#include "stack/host_types.hh"
#include "stack/icmp_handler.hh"
#include "stack/ipv4_input.hh"
#include "stack/ipv6_input.hh"
#include "stack/listener_admission.hh"
#include "stack/port_allocator.hh"
#include "stack/socket_events.hh"
#include "stack/socket_table.hh"
#include "stack/socket_timers.hh"
#include "stack/time_wait_handler.hh"
#include "tcp/isn.hh"
#include "tcp/syn_cookie.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_connection.hh"
#include "util/counters.hh"
#include "util/expected.hh"
#include "util/time.hh"
#include "wire/ipv4.hh"

namespace tinytcp::stack {

class Host {
 public:
  using Output = std::function<void(std::string_view datagram)>;
  using EventCallback = std::function<void(SocketId, SocketEvent)>;

  Host(HostConfig config, Output output);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // Network side. `link_multicast`: the datagram came in a link-layer
  // broadcast or multicast frame (TAP), so no ICMP error may answer it.
  void receive_datagram(std::string_view datagram, Instant now, bool link_multicast = false);
  void tick(Instant now);
  // A datagram of ours the device would not take (ENOBUFS, EAGAIN: a full
  // local queue), as output gave it. A TCP segment in flight in it is marked
  // lost and goes again at once (TcpConnection::on_send_failed); the
  // connection's timer is due now, so the caller's loop ticks it. Never
  // sends from inside this call.
  void on_send_failed(std::string_view datagram, Instant now);
  std::optional<Instant> next_deadline() const;
  // Around one batch of received datagrams (StackRuntime: one read of the
  // device's queue): the connections that receive segments in between hold
  // their pure ACKs (TcpConnection::hold_acks), and release_acks() sends the
  // one each has due, so the batch costs one ACK per connection instead of
  // one per two segments.
  void hold_acks() { holding_acks_ = true; }
  void release_acks(Instant now);

  // Socket API.
  Expected<SocketId, SocketError> connect(wire::Ipv4Address remote, uint16_t port, Instant now) {
    return connect(IpAddress(remote), port, now);
  }
  // To either family: from our IPv6 address to an IPv6 one
  // (NoAddressOfFamily without HostConfig::ipv6).
  Expected<SocketId, SocketError> connect(const IpAddress& remote, uint16_t port, Instant now);
  // A listener takes connections to `port` on both our addresses.
  Expected<SocketId, SocketError> listen(uint16_t port, size_t backlog = 0);
  // A connection that completed its handshake on `listener`, if any.
  std::optional<SocketId> accept(SocketId listener) { return sockets_.accept(listener); }
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
  // Zero-copy write: the free send buffer to fill in place, up to `max` bytes
  // and what write() would take now (one span, or two at the ring's wrap
  // point; empty when write() would take nothing). Valid until the next call
  // into the Host; commit_write() then queues the first `n` bytes of it as
  // write() would have, and returns n, or 0 (nothing queued) when n exceeds
  // the region or something came in between.
  stream::WriteRegion write_region(SocketId id, size_t max);
  size_t commit_write(SocketId id, size_t n, Instant now);
  void shutdown_write(SocketId id, Instant now);
  // Graceful close: our FIN follows the data written; the socket id is
  // released at once and the connection lingers (TIME-WAIT) on its own. With
  // unread data, or before the handshake completed, it aborts instead.
  void close(SocketId id, Instant now);
  // RST (in a synchronized state) and release.
  void abort(SocketId id, Instant now);

  std::optional<SocketInfo> info(SocketId id) const;
  const tcp::TcpConnection* connection(SocketId id) const;
  void set_event_callback(EventCallback callback) { events_.set_callback(std::move(callback)); }
  void set_trace(SocketId id, tcp::TcpSender::Trace trace);

  const HostConfig& config() const { return config_; }
  const HostStats& stats() const { return stats_; }
  const net::IcmpResponderStats& icmp_stats() const { return ipv4_.icmp_stats(); }
  // The IPv6 side (null without HostConfig::ipv6): ICMPv6 and reassembly counters.
  const Ipv6Input* ipv6_input() const { return ipv6_ ? &*ipv6_ : nullptr; }
  size_t socket_count() const { return sockets_.size(); }
  size_t connection_count() const { return sockets_.connection_count(); }
  // Connections with something of ours not yet delivered: every state before
  // our FIN is acknowledged (FIN-WAIT-2, TIME-WAIT and CLOSED are done).
  size_t undelivered_count() const { return sockets_.undelivered_count(); }
  // Connections in TIME-WAIT that no application holds (not sockets).
  size_t time_wait_count() const { return time_wait_.size(); }

 private:
  using Socket = HostSocket;

  // What either family's input path made of a datagram.
  void apply(const IpInputOutcome& out, Instant now);
  // A TCP segment of either family: to its connection, TIME-WAIT entry or
  // listener, or answered with a RST.
  void on_segment(const InboundSegment& in, Instant now);
  // A frag-needed or Packet Too Big about one of our segments.
  void on_path_mtu(const FragmentationNeeded& frag, Instant now);
  void send_reset(const InboundSegment& in);
  void on_listener_syn(Socket& listener, const InboundSegment& in, Instant now,
                       std::optional<tcp::Wrap32> isn = std::nullopt);
  void send_cookie_syn_ack(ListenQueue& listener, const InboundSegment& in, Instant now);
  // An ACK for no connection on a listener's port that may carry a cookie:
  // true if it was taken (a connection made, or dropped and counted).
  bool on_cookie_ack(Socket& listener, const InboundSegment& in, Instant now);
  void emit(std::string_view datagram);
  void send_segment(const tcp::TcpSegment& segment, const FourTuple& tuple);

  Socket* find(SocketId id) { return sockets_.find(id); }
  const Socket* find(SocketId id) const { return sockets_.find(id); }
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
  // `now`, or the latest instant any call gave if that is later: the layers
  // below see time move forward only, even when a caller hands in a time read
  // once per batch (StackRuntime) after another read a fresher clock.
  Instant advance(Instant now) {
    if (now < latest_) {
      return latest_;
    }
    latest_ = now;
    return now;
  }

  HostConfig config_;
  Output output_;
  tcp::IsnGenerator isn_;
  ListenerAdmission admission_;
  PortAllocator ports_;
  AddressFold fold_;  // addresses for the ISN and timestamp-offset functions
  Ipv4Input ipv4_;
  std::optional<Ipv6Input> ipv6_;
  tcp::TcpConfig tcp6_;  // config_.tcp with the IPv6 MSS
  // The TCP configuration of a connection on `t`: its family's MSS.
  const tcp::TcpConfig& tcp_config(const FourTuple& t) const {
    return t.family() == IpFamily::V6 ? tcp6_ : config_.tcp;
  }
  HostStats stats_;

  SocketTable sockets_;
  TimeWaitHandler time_wait_;

  SocketTimers timers_;

  SocketEvents events_;
  // Room for the largest datagram, left uninitialised: zeroing 64 KiB was
  // a tenth of what constructing a Host cost (one per tunnel peer).
  std::unique_ptr<char[]> out_buffer_;
  Instant latest_{};
  bool holding_acks_ = false;
  std::vector<SocketId> held_acks_;  // connections holding ACKs for release_acks()
};

}  // namespace tinytcp::stack

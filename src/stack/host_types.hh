#pragma once

// The vocabulary of Host's socket API: its configuration, socket ids,
// errors and events, what a socket reports, and the counters of what the
// Host did and dropped. Kept apart from Host so that its parts (listener
// admission, ICMP handling) and its users name them without the Host.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "net/icmp_responder.hh"
#include "net/icmpv6_responder.hh"
#include "net/ipv4_reassembler.hh"
#include "net/ipv6_reassembler.hh"
#include "stack/four_tuple.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_state.hh"
#include "util/counters.hh"
#include "util/time.hh"
#include "wire/ipv4.hh"
#include "wire/ipv6.hh"
#include "wire/ipv6_chain.hh"

namespace tinytcp::stack {

using SocketId = uint32_t;  // 0 is never a socket

struct HostConfig {
  wire::Ipv4Address address;
  // Our IPv6 address (unicast, not IPv4-mapped), if the Host answers on one
  // too (Ipv6Input). IPv6 connections announce an MSS 20 bytes below tcp.mss
  // (MTU - 60 where tcp.mss is MTU - 40).
  std::optional<wire::Ipv6Address> ipv6;
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
  net::Icmpv6Responder::Config icmpv6;
  net::Ipv6Reassembler::Config reassembly6;
  wire::Ipv6ChainLimits ipv6_chain;
};

enum class SocketError {
  NotFound,      // no such socket
  AddressInUse,  // a listener already has the port
  NoPortsFree,   // every ephemeral port to that peer is taken
  TooManySockets,
  NotListener,
  BadAddress,         // connect to a zero, broadcast or multicast address, or port 0
  NoAddressOfFamily,  // connect to an IPv6 address from a Host with no IPv6 address
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
  IcmpStale,        // frag-needed or Packet Too Big quoting no connection or no data in flight
  NoConnection,     // TCP for no connection or listener (answered with RST)
  SynBacklogFull,   // SYN while `backlog` are half-open and syn_cookies is off
  BadCookie,        // ACK for a listener that sent cookies, not a valid cookie (reset)
  AcceptQueueFull,  // handshake completed while `backlog` wait for accept() (reset)
  SocketLimit,      // SYN while max_sockets exist
  BadIpv6,          // failed IPv6 parsing (truncated, version, payload length)
  BadIpv6Chain,     // extension headers refused (RFC 8200 §4; Parameter Problem where due)
  NoNextHeader,     // IPv6 with Next Header 59: nothing to deliver
  Ndp,              // neighbor discovery: the NetworkInterface's job, not the Host's
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
  uint64_t path_mtu_updates = 0;   // frag-needed / Packet Too Big that checked out (RFC 1191, 8201)
  uint64_t time_wait_entered = 0;  // connections moved to the TIME-WAIT table
  uint64_t time_wait_overflow = 0;  // closed without TIME-WAIT: the table was full
  uint64_t time_wait_acks = 0;      // ACKs sent from TIME-WAIT entries
  uint64_t time_wait_reused = 0;    // new SYNs accepted in TIME-WAIT (RFC 6191)
  uint64_t time_wait_reset = 0;     // entries ended by a RST at RCV.NXT
  // Datagrams the device would not take (on_send_failed), and of them the
  // segments in flight that were marked lost to go again at once.
  uint64_t send_failures = 0;
  uint64_t send_failures_resent = 0;
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

}  // namespace tinytcp::stack

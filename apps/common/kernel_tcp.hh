#pragma once

// Kernel TCP sockets for the apps: the baseline transport of file-send and
// file-recv (`--transport kernel`), and the kernel side of interop tests.
// Errors are thrown as std::runtime_error with one line for the user.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "io/udp_endpoint.hh"
#include "stack/ip_address.hh"
#include "util/time.hh"

namespace tinytcp::apps {

struct HostPort {
  std::string host;  // a name, a dotted quad or an IPv6 address (no brackets)
  uint16_t port = 0;
  std::string to_string() const;  // "HOST:PORT", "[IPv6]:PORT"
};

// Parses "HOST:PORT" or "[IPv6]:PORT" (port 1-65535); throws
// std::invalid_argument with a clear message: an IPv6 address without
// brackets, a missing ']', a bad address in brackets, a bad port.
HostPort parse_host_port(const std::string& text);

// A listening option: "PORT" (every address of both families; host empty),
// or "ADDR:PORT" / "[IPv6]:PORT" (that address; "[::]:PORT" both families).
// Throws std::invalid_argument as parse_host_port.
HostPort parse_listen(const std::string& text);

// A socket address of either family, as connect/bind/accept take and give
// it. Its address and port are an io::UdpEndpoint, which converts to and
// from the socket's form and writes the text.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  // The address and port, an IPv4-mapped address (a dual-stack listener's
  // IPv4 peer) as the IPv4 address it is; 0.0.0.0:0 for another family.
  io::UdpEndpoint endpoint() const;
  stack::IpAddress ip() const;
  uint16_t port() const { return endpoint().port; }
  std::string to_string() const { return endpoint().to_string(); }  // "a.b.c.d:PORT", "[IPv6]:PORT"
  static SocketAddress of(const sockaddr_storage& storage, socklen_t length);
  // `endpoint` on a socket of `family`: on AF_INET6 an IPv4 endpoint is
  // IPv4-mapped (0.0.0.0 is ::); on AF_INET an IPv6 one has no form (length 0).
  static SocketAddress of(const io::UdpEndpoint& endpoint, int family);
};

// HOST:PORT to a socket address. An address of either family is taken as
// is; a name is looked up (getaddrinfo) and its first IPv4 address is used,
// or its first IPv6 address when it has no IPv4 one: IPv4 first, so a name
// reaches what it reached before IPv6. Throws std::runtime_error "cannot
// resolve NAME".
SocketAddress resolve(const HostPort& endpoint);
// The address text of resolve(): a dotted quad or IPv6 text (no brackets).
std::string resolve_address(const std::string& host);
// The UDP tunnel device of StackRuntime for `to`: "udp:ADDR:PORT" or
// "udp:[IPv6]:PORT", the name resolved as above.
std::string udp_device(const HostPort& to);

// Connects, waiting at most `timeout`; throws "cannot reach HOST:PORT: why".
// `congestion_control` (e.g. "cubic", "bbr", "reno"; empty: the system
// default) is set with TCP_CONGESTION before connecting.
int connect_tcp(const HostPort& to, Duration timeout, const std::string& congestion_control = "");

// TCP_NODELAY: a small write (a session's control frame after a data frame)
// leaves at once instead of waiting for the ACK of what is in flight, which a
// Linux peer may delay 40 ms (Nagle against delayed ACK). Every kernel stream
// we make or accept has it.
void set_no_delay(int fd);

// Listens on both families (port 0 picks one): [::] with IPV6_V6ONLY off, so
// IPv4 clients come in as IPv4-mapped addresses; 0.0.0.0 on a kernel
// without IPv6. Throws on failure.
int listen_tcp(uint16_t port, int backlog);
// Listens on `at` (SO_REUSEADDR); "[::]:PORT" takes both families as above.
// Throws "cannot listen on AT: why".
int listen_tcp(const SocketAddress& at, int backlog, bool nonblocking = false);
uint16_t local_port(int fd);

// Kernel TCP counters of a connected socket (TCP_INFO).
struct KernelTcpInfo {
  uint64_t bytes_sent = 0;  // including retransmissions
  uint64_t bytes_retransmitted = 0;
  uint32_t total_retransmits = 0;
};
KernelTcpInfo kernel_tcp_info(int fd);
// Bytes in the socket's send queue: not yet sent, or sent and not acknowledged.
uint64_t kernel_unacknowledged(int fd);

}  // namespace tinytcp::apps

#pragma once

// Kernel TCP sockets for the apps: the baseline transport of file-send and
// file-recv (`--transport kernel`), and the kernel side of interop tests.
// Errors are thrown as std::runtime_error with one line for the user.

#include <cstdint>
#include <string>

#include "util/time.hh"

namespace tinytcp::apps {

struct HostPort {
  std::string host;
  uint16_t port = 0;
};

// Parses "HOST:PORT"; throws std::invalid_argument with a clear message.
HostPort parse_host_port(const std::string& text);

// A dotted quad as is, or the first IPv4 address of a name; throws
// std::runtime_error "cannot resolve NAME".
std::string resolve_ipv4(const std::string& host);

// Connects, waiting at most `timeout`; throws "cannot reach HOST:PORT: why".
// `congestion_control` (e.g. "cubic", "bbr", "reno"; empty: the system
// default) is set with TCP_CONGESTION before connecting.
int connect_tcp(const HostPort& to, Duration timeout, const std::string& congestion_control = "");

// Listens on 0.0.0.0:port (port 0 picks one); throws on failure.
int listen_tcp(uint16_t port, int backlog);
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

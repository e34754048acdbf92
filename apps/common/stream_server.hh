#pragma once

// The serving side of the reliable byte stream under file-recv, for many
// connections at once on one thread: a StreamServer accepts without blocking
// and runs one pass of its event loop at a time; each StreamEnd moves
// bytes between a protocol endpoint (PumpIo) and its connection without
// waiting (stream_end.hh). Whichever TCP carries them
// (TransportOptions::transport):
//   kernel  a listening kernel TCP socket, non-blocking connections (poll)
//   udp     tinytcp in the UDP tunnel, one Host per peer (PeerRuntime): any
//           number of senders on one UDP port, never mixed
//   tun     tinytcp on a TUN device, many connections on one Host
// With TransportOptions::robust every accepted stream is a robust session
// over such connections (common/robust_streams.hh).
//
// Errors for the user are thrown as std::runtime_error with one line.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/stream_end.hh"
#include "common/stream_transport.hh"
#include "common/transfer_driver.hh"
#include "io/event_loop.hh"
#include "stack/host.hh"
#include "util/time.hh"

namespace tinytcp::apps {

struct ServerLimits {
  size_t max_peers = 1024;      // udp: peers at once (PeerHostsConfig::max_peers)
  size_t max_embryonic = 256;   // udp: peers whose handshake has not completed
  size_t sockets_per_peer = 4;  // udp: connections (and TIME-WAITs: 4x) per peer
  size_t backlog = 128;         // kernel and tun: completed connections not yet accepted
};

class StreamServer {
 public:
  virtual ~StreamServer() = default;
  // A new connection, or null when none waits.
  virtual std::unique_ptr<StreamEnd> accept() = 0;
  // Sleeps until something may have happened (a packet, a timer, a
  // connection) or `max_wait` passes.
  virtual void wait(Duration max_wait) = 0;
  // Also wakes wait() when `fd` becomes ready for `events`
  // (io::EventLoop::kReadable, kWritable; a worker's eventfd, a forwarder's
  // socket); the owner clears the readiness. Watching a watched fd again
  // changes its events. unwatch() before closing it.
  virtual void watch(int fd, uint32_t events) = 0;
  virtual void unwatch(int fd) = 0;
  // One line of the server's counters (peers, drops), for the log.
  virtual std::string summary() const = 0;
};

// Serves on `at` (parse_listen): an empty host is every address of both
// families; an address (udp, kernel) only that one.
std::unique_ptr<StreamServer> serve_streams(const TransportOptions& options, const HostPort& at,
                                            const ServerLimits& limits);
inline std::unique_ptr<StreamServer> serve_streams(const TransportOptions& options, uint16_t port,
                                                   const ServerLimits& limits) {
  return serve_streams(options, HostPort{"", port}, limits);
}

}  // namespace tinytcp::apps

#pragma once

// The serving side of the reliable byte stream under file-recv, for many
// connections at once on one thread: a StreamServer accepts without blocking
// and runs one pass of its event loop at a time; each ServerStream moves
// bytes between a protocol endpoint (PumpIo) and its connection without
// waiting. Whichever TCP carries them (TransportOptions::transport):
//   kernel  a listening kernel TCP socket, non-blocking connections (poll)
//   udp     tinytcp in the UDP tunnel, one Host per peer (PeerRuntime): any
//           number of senders on one UDP port, never mixed
//   tun     tinytcp on a TUN device, many connections on one Host
//
// Errors for the user are thrown as std::runtime_error with one line.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/stream_transport.hh"
#include "common/transfer_driver.hh"
#include "stack/host.hh"
#include "util/time.hh"

namespace tinytcp::apps {

// What one pass of moving bytes did.
struct StepOutcome {
  bool progress = false;           // bytes moved, or the peer acknowledged some
  bool more_output = false;        // stopped at the per-pass output slice: step again soon
  std::optional<PumpOutcome> end;  // finished: done, peer closed, or an error
};

// One pass over a tinytcp socket: up to `output_slice` bytes of the
// endpoint's output into the send buffer, everything readable to its input.
// Progress from acknowledgements is the caller's to track.
StepOutcome step_stack_stream(stack::Host& host, stack::SocketId id, const PumpIo& io, Instant now,
                              size_t output_slice);

class ServerStream {
 public:
  virtual ~ServerStream() = default;
  // The sender, "a.b.c.d:port" (for udp the outer endpoint of its tunnel),
  // and its IPv4 address alone (the machine it runs on).
  virtual const std::string& peer() const = 0;
  virtual uint32_t peer_address() const = 0;
  virtual StepOutcome step(const PumpIo& io) = 0;
  // Graceful close, without blocking: shutdown_write() sends our FIN after
  // the data; closed() is true once it is acknowledged (or the connection is
  // gone); release() then lets go of the socket.
  virtual void shutdown_write() = 0;
  virtual bool closed() = 0;
  virtual void release() = 0;
  // RST and release: the session is given up.
  virtual void abort() = 0;
};

struct ServerLimits {
  size_t max_peers = 1024;     // udp: peers at once (PeerHostsConfig::max_peers)
  size_t max_embryonic = 256;  // udp: peers whose handshake has not completed
  size_t backlog = 128;        // kernel and tun: completed connections not yet accepted
};

class StreamServer {
 public:
  virtual ~StreamServer() = default;
  // A new connection, or null when none waits.
  virtual std::unique_ptr<ServerStream> accept() = 0;
  // Sleeps until something may have happened (a packet, a timer, a
  // connection) or `max_wait` passes.
  virtual void wait(Duration max_wait) = 0;
  // Also wakes wait() when `fd` becomes readable (a worker's eventfd); the
  // reader clears it. unwatch() before closing it.
  virtual void watch(int fd) = 0;
  virtual void unwatch(int fd) = 0;
  // One line of the server's counters (peers, drops), for the log.
  virtual std::string summary() const = 0;
};

std::unique_ptr<StreamServer> serve_streams(const TransportOptions& options, uint16_t port,
                                            const ServerLimits& limits);

}  // namespace tinytcp::apps

#pragma once

// The connecting side of stream_server.hh: many connections to one server at
// once on one thread. connect() starts a connection and returns its
// StreamEnd at once (bytes written before the handshake completes wait in
// the send buffer; a failed handshake ends step() with an error); wait()
// runs one pass of the event loop. Whichever TCP carries them
// (TransportOptions::transport):
//   udp     tinytcp in the UDP tunnel to the server's UDP port: one Host on
//           one UDP socket, every connection from its own TCP port inside it
//   tun     tinytcp on a TUN device to a kernel server
//   kernel  non-blocking kernel TCP sockets
// With TransportOptions::robust every connection is a robust session over
// such connections (common/robust_streams.hh).
//
// Errors for the user are thrown as std::runtime_error with one line.

#include <memory>
#include <string>

#include "common/kernel_tcp.hh"
#include "common/stream_end.hh"
#include "common/stream_transport.hh"
#include "io/event_loop.hh"
#include "util/time.hh"

namespace tinytcp::apps {

class StreamClient {
 public:
  virtual ~StreamClient() = default;
  // A new connection to the server; null (and `error` says why, one line)
  // when none can be started now: out of ports, sockets or descriptors.
  virtual std::unique_ptr<StreamEnd> connect(std::string& error) = 0;
  // Sleeps until something may have happened (a packet, a timer, a watched
  // fd) or `max_wait` passes.
  virtual void wait(Duration max_wait) = 0;
  // As StreamServer::watch: also wakes wait() when `fd` becomes ready for
  // `events` (io::EventLoop::kReadable, kWritable); again: new events.
  virtual void watch(int fd, uint32_t events) = 0;
  virtual void unwatch(int fd) = 0;
  // udp: a new tunnel socket (a new local port, and the source address the
  // routes give now: after the machine's address changed, the old one no
  // longer reaches the server). Connections made before it are lost.
  virtual void renew() {}
  virtual std::string summary() const = 0;
};

std::unique_ptr<StreamClient> connect_streams(const TransportOptions& options, const HostPort& to);

}  // namespace tinytcp::apps

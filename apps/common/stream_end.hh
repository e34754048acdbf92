#pragma once

// StreamEnd: one end of a reliable byte stream that a single-threaded loop
// steps without blocking, many at once: each step() moves bytes between a
// protocol endpoint (PumpIo) and the connection. The servers of
// stream_server.hh hand them out for accepted connections, the clients of
// stream_client.hh for connections they open. Whichever TCP carries it:
//   stack   a socket on a tinytcp Host (UDP tunnel or TUN)
//   kernel  a non-blocking kernel TCP socket (possibly still connecting)

#include <poll.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/transfer_driver.hh"
#include "io/event_loop.hh"
#include "session/session_stats.hh"
#include "stack/host.hh"
#include "stack/ip_address.hh"
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

class StreamEnd {
 public:
  virtual ~StreamEnd() = default;
  // The other end, "a.b.c.d:port" or "[IPv6]:port" (for udp the outer
  // endpoint of its tunnel), and its address alone (the machine it runs on).
  virtual const std::string& peer() const = 0;
  virtual stack::IpAddress peer_address() const = 0;
  // end == PeerClosed means the peer half-closed: stepping on still moves
  // our output (a forwarder relies on that).
  virtual StepOutcome step(const PumpIo& io) = 0;
  // Graceful close, without blocking: shutdown_write() sends our FIN after
  // the data; closed() is true once it is acknowledged (or the connection is
  // gone); release() then lets go of the socket.
  virtual void shutdown_write() = 0;
  virtual bool closed() = 0;
  virtual void release() = 0;
  // RST and release: the connection is given up.
  virtual void abort() = 0;
  // Why a connection is given up, for ends that can tell their peer (a robust
  // session sends it in an ABORT); the others just abort().
  enum class AbortCause { Application, Reset, Refused, Unreachable };
  virtual void abort_because(AbortCause cause) {
    static_cast<void>(cause);
    abort();
  }
  // Hand-offs without a copy of our own, for a relay between two ends
  // (tt-tunnel). An end that keeps the bytes in a buffer of its own anyway (a
  // robust session: its replay buffer and its receive ring) takes a relay's
  // bytes straight into it, offer() returning how many it took, and shows what
  // it received in place (shows_input(); received(), consume_received());
  // step() then leaves input where it is while the endpoint's input is not
  // wanted. The others take and show nothing (a relay queues for them).
  virtual size_t offer(std::string_view data) {
    static_cast<void>(data);
    return 0;
  }
  virtual bool shows_input() const { return false; }
  virtual std::string_view received() { return {}; }
  virtual void consume_received(size_t n) { static_cast<void>(n); }
  // A robust session's counters (nullptr: a plain connection, or gone).
  virtual const session::SessionStats* session_stats() const { return nullptr; }
  // Bytes written that the peer has not acknowledged yet.
  virtual uint64_t unacknowledged() = 0;
};

// A socket on a Host that may go away (`host` returns null once a udp peer
// was forgotten); `flush` hands the Host's batched datagrams to the device.
std::unique_ptr<StreamEnd> make_stack_stream(std::function<stack::Host*()> host,
                                             std::function<Instant()> now,
                                             std::function<void()> flush, stack::SocketId id,
                                             const stack::IpAddress& address, uint16_t port);

// The kernel sockets a loop polls, each with the events it waits for: POLLOUT
// while output waits, POLLIN unless the endpoint holds input back.
using PollSet = std::map<int, short>;

// Takes `fd` (a connected or connecting non-blocking TCP socket) and keeps
// its entry of `polled` up to date.
std::unique_ptr<StreamEnd> make_kernel_stream(int fd, std::shared_ptr<PollSet> polled,
                                              const stack::IpAddress& address, uint16_t port);

// The fds that the owner of a StreamServer or StreamClient on an
// io::EventLoop asked it to watch (their callbacks do nothing: they only
// wake the loop).
class LoopWatches {
 public:
  void watch(io::EventLoop& loop, int fd, uint32_t events);
  void unwatch(io::EventLoop& loop, int fd);

 private:
  std::set<int> fds_;
};
// io::EventLoop readiness bits as poll(2) events.
short poll_events(uint32_t events);

// Appends a pollfd for every entry of `polled` that wants something. One
// that wants nothing is left out: poll(2) and epoll report POLLHUP whatever
// was asked, and a socket both of whose directions are shut (tt-tunnel's
// program socket while its robust session still closes) would make every
// wait return at once (docs/session.md, "Per-connection cost").
void append_wanted(std::vector<pollfd>& fds, const std::map<int, short>& polled);

// "a.b.c.d:port" or "[IPv6]:port".
std::string endpoint_text(const stack::IpAddress& address, uint16_t port);

}  // namespace tinytcp::apps

#pragma once

// SocketEvents: what a Host tells its application about sockets. It finds
// the edges worth announcing (bytes or EOF arrived: Readable; send space
// freed, as Linux's sk_stream_is_writeable: Writable), queues them with the
// Host's own (Connected, Acceptable, Closed), and delivers the queue at the
// end of each Host call, so a callback may call back into the Host; events
// that callback queues are delivered in the same round.

#include <functional>
#include <utility>
#include <vector>

#include "stack/host_types.hh"
#include "stack/socket_table.hh"
#include "tcp/tcp_connection.hh"

namespace tinytcp::stack {

class SocketEvents {
 public:
  using Callback = std::function<void(SocketId, SocketEvent)>;

  void set_callback(Callback callback) { callback_ = std::move(callback); }
  void queue(SocketId id, SocketEvent e) { events_.emplace_back(id, e); }
  // Queues Readable and Writable for `s` (an application's connection) if
  // its streams changed since they were last announced; `established`:
  // the handshake is done, so writing makes sense.
  void announce_io(HostSocket& s, const tcp::TcpConnection& c, bool established) {
    const stream::ByteStream& in = c.inbound();
    const bool fin = in.is_closed();
    if (in.bytes_pushed() != s.seen_pushed || fin != s.seen_fin) {
      s.seen_pushed = in.bytes_pushed();
      s.seen_fin = fin;
      queue(s.id, SocketEvent::Readable);
    }
    // Writable when the free space grew since the last announcement (or since
    // it last shrank) and is at least half of what is still queued, as
    // Linux's sk_stream_is_writeable(): a full buffer is announced once a
    // third of it is free, not after every ACK, so an app writes (and reads
    // its source) in large pieces. Everything acknowledged, any space is enough.
    const uint64_t writable = c.writable_bytes();
    if (writable > s.seen_writable) {
      if (established && 2 * writable >= c.outbound().bytes_buffered()) {
        queue(s.id, SocketEvent::Writable);
        s.seen_writable = writable;
      }
    } else {
      s.seen_writable = writable;
    }
  }
  // Delivers every queued event; does nothing when called from a callback
  // (the outer call delivers).
  void dispatch();

 private:
  Callback callback_;
  std::vector<std::pair<SocketId, SocketEvent>> events_;
  bool dispatching_ = false;
};

}  // namespace tinytcp::stack

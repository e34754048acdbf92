#include "stack/socket_events.hh"

namespace tinytcp::stack {

void SocketEvents::announce_io(HostSocket& s, const tcp::TcpConnection& c, bool established) {
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

void SocketEvents::dispatch() {
  if (dispatching_) {
    return;
  }
  dispatching_ = true;
  while (!events_.empty()) {
    std::vector<std::pair<SocketId, SocketEvent>> batch;
    batch.swap(events_);
    for (const auto& [id, e] : batch) {
      if (callback_) {
        callback_(id, e);
      }
    }
  }
  dispatching_ = false;
}

}  // namespace tinytcp::stack

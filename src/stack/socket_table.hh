#pragma once

// SocketTable: a Host's sockets by SocketId, its connections by 4-tuple and
// its listeners by port, kept consistent: a socket is in the tuple or port
// index exactly while it is in the table, and releasing a half-open
// connection gives its place in the listener's SYN queue back. Bounded by
// the Host (HostConfig::max_sockets), which checks size() before adding.
//
// It holds sockets; what happens to them (events, timers, the connection's
// segments) is the Host's.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "stack/four_tuple.hh"
#include "stack/host_types.hh"
#include "stack/listener_admission.hh"
#include "tcp/tcp_connection.hh"
#include "util/time.hh"

namespace tinytcp::stack {

// One socket of a Host: a connection, or a listener's queues.
struct HostSocket {
  SocketId id = 0;
  FourTuple tuple;
  std::unique_ptr<tcp::TcpConnection> conn;  // null for a listener
  std::optional<ListenQueue> listener;
  SocketId parent = 0;      // listener of a passive open not yet accepted
  bool half_open = false;   // counted in the parent's half_open
  bool queued = false;      // in the parent's ready queue
  bool app_closed = false;  // the app let go: reclaim once CLOSED
  bool announced_connected = false;
  bool announced_closed = false;
  std::optional<Instant> scheduled;
  uint64_t seen_pushed = 0;  // inbound bytes_pushed at the last Readable
  bool seen_fin = false;
  uint64_t seen_writable = 0;  // writable_bytes at the last Writable, or lower since
};

// What info() reports of a socket.
SocketInfo socket_info(const HostSocket& s);

class SocketTable {
 public:
  // The id the next socket gets (never 0, never reused).
  SocketId allocate_id() { return next_id_++; }
  // Adds a connection (indexed by its tuple) or a listener (by its port).
  HostSocket& add(std::unique_ptr<HostSocket> socket);
  // Removes a socket from the table and its index; a half-open connection
  // leaves its listener's SYN queue.
  void release(SocketId id);

  HostSocket* find(SocketId id) {
    const auto it = sockets_.find(id);
    return it == sockets_.end() ? nullptr : it->second.get();
  }
  const HostSocket* find(SocketId id) const {
    const auto it = sockets_.find(id);
    return it == sockets_.end() ? nullptr : it->second.get();
  }
  // The connection with this 4-tuple, if any.
  std::optional<SocketId> connection(const FourTuple& tuple) const {
    const auto it = by_tuple_.find(tuple);
    return it == by_tuple_.end() ? std::nullopt : std::optional<SocketId>(it->second);
  }
  // The listener on `port`, if any.
  HostSocket* listener(uint16_t port) {
    const auto it = listener_by_port_.find(port);
    return it == listener_by_port_.end() ? nullptr : find(it->second);
  }
  bool listening(uint16_t port) const { return listener_by_port_.count(port) > 0; }
  // The next connection of `listener`'s accept queue, handed to the
  // application (no longer the listener's child), if any.
  std::optional<SocketId> accept(SocketId listener);
  // Connections a listener made that nobody accepted yet.
  std::vector<SocketId> children(SocketId listener) const;

  size_t size() const { return sockets_.size(); }
  size_t connection_count() const { return by_tuple_.size(); }
  // Connections with something of ours not yet delivered: every state before
  // our FIN is acknowledged (FIN-WAIT-2, TIME-WAIT and CLOSED are done).
  size_t undelivered_count() const;
  // Calls f(const HostSocket&) for every socket.
  template <typename F>
  void for_each(F f) const {
    for (const auto& [id, socket] : sockets_) {
      f(*socket);
    }
  }

 private:
  SocketId next_id_ = 1;
  std::unordered_map<SocketId, std::unique_ptr<HostSocket>> sockets_;
  std::unordered_map<FourTuple, SocketId, FourTupleHash> by_tuple_;
  std::unordered_map<uint16_t, SocketId> listener_by_port_;
};

}  // namespace tinytcp::stack

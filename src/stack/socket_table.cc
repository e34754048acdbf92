#include "stack/socket_table.hh"

#include <utility>

namespace tinytcp::stack {

SocketInfo socket_info(const HostSocket& s) {
  SocketInfo out;
  out.tuple = s.tuple;
  out.listener = s.listener.has_value();
  if (s.conn) {
    const tcp::TcpConnection& c = *s.conn;
    out.state = c.state();
    out.close_reason = c.close_reason();
    out.readable_bytes = c.inbound().bytes_buffered();
    out.writable_bytes = c.writable_bytes();
    out.peer_finished = c.inbound().is_finished();
  } else {
    out.state = tcp::TcpState::Listen;
  }
  return out;
}

std::optional<SocketId> SocketTable::accept(SocketId listener) {
  HostSocket* l = find(listener);
  if (l == nullptr || !l->listener) {
    return std::nullopt;
  }
  while (!l->listener->ready.empty()) {
    const SocketId id = l->listener->ready.front();
    l->listener->ready.pop_front();
    HostSocket* s = find(id);
    if (s == nullptr) {
      continue;
    }
    s->queued = false;
    s->parent = 0;
    s->announced_connected = true;
    return id;
  }
  return std::nullopt;
}

HostSocket& SocketTable::add(std::unique_ptr<HostSocket> socket) {
  HostSocket& ref = *socket;
  const SocketId id = ref.id;
  sockets_.emplace(id, std::move(socket));
  if (ref.listener) {
    listener_by_port_.emplace(ref.listener->port, id);
  } else {
    by_tuple_.emplace(ref.tuple, id);
  }
  return ref;
}

void SocketTable::release(SocketId id) {
  const auto it = sockets_.find(id);
  if (it == sockets_.end()) {
    return;
  }
  HostSocket& s = *it->second;
  if (s.listener) {
    listener_by_port_.erase(s.listener->port);
  } else {
    const auto t = by_tuple_.find(s.tuple);
    if (t != by_tuple_.end() && t->second == id) {
      by_tuple_.erase(t);
    }
    if (s.half_open) {
      if (HostSocket* parent = find(s.parent); parent && parent->listener) {
        --parent->listener->half_open;
      }
    }
  }
  sockets_.erase(it);
}

std::vector<SocketId> SocketTable::children(SocketId listener) const {
  std::vector<SocketId> out;
  for (const auto& [id, socket] : sockets_) {
    if (socket->parent == listener) {
      out.push_back(id);
    }
  }
  return out;
}

size_t SocketTable::undelivered_count() const {
  size_t n = 0;
  for (const auto& [id, socket] : sockets_) {
    if (socket->conn) {
      const tcp::TcpState state = socket->conn->state();
      n += state != tcp::TcpState::FinWait2 && state != tcp::TcpState::TimeWait &&
           state != tcp::TcpState::Closed;
    }
  }
  return n;
}

}  // namespace tinytcp::stack

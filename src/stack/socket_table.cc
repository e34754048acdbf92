#include "stack/socket_table.hh"

#include <utility>

namespace tinytcp::stack {

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

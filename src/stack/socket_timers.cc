#include "stack/socket_timers.hh"

namespace tinytcp::stack {

void SocketTimers::schedule(HostSocket& s, std::optional<Instant> deadline) {
  if (deadline && (!s.scheduled || *s.scheduled != *deadline)) {
    heap_.emplace(*deadline, s.id);
  }
  s.scheduled = deadline;
}

std::vector<SocketId> SocketTimers::take_due(Instant now, SocketTable& sockets) {
  std::vector<SocketId> due;
  while (!heap_.empty() && heap_.top().first <= now) {
    const auto [when, id] = heap_.top();
    heap_.pop();
    HostSocket* s = sockets.find(id);
    if (s != nullptr && s->scheduled && *s->scheduled == when) {
      s->scheduled.reset();
      due.push_back(id);
    }
  }
  return due;
}

std::optional<Instant> SocketTimers::next_deadline(const SocketTable& sockets) const {
  while (!heap_.empty()) {
    const auto& [when, id] = heap_.top();
    const HostSocket* s = sockets.find(id);
    if (s != nullptr && s->scheduled && *s->scheduled == when) {
      return when;
    }
    heap_.pop();
  }
  return std::nullopt;
}

}  // namespace tinytcp::stack

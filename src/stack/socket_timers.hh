#pragma once

// SocketTimers: when each of a Host's connections next needs tick(). A
// min-heap of (deadline, socket); a socket's current deadline is the one in
// HostSocket::scheduled, and heap entries that no longer match it (the
// deadline moved, or the socket is gone) are skipped lazily, so re-arming
// costs a push and never a search.

#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "stack/host_types.hh"
#include "stack/socket_table.hh"
#include "util/time.hh"

namespace tinytcp::stack {

class SocketTimers {
 public:
  // `s`'s connection reports `deadline` (nullopt: no timer).
  void schedule(HostSocket& s, std::optional<Instant> deadline);
  // The sockets due at `now`, earliest first; their timers are disarmed.
  std::vector<SocketId> take_due(Instant now, SocketTable& sockets);
  // The earliest armed deadline (drops stale entries on the way).
  std::optional<Instant> next_deadline(const SocketTable& sockets) const;

 private:
  using Entry = std::pair<Instant, SocketId>;
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const { return a.first > b.first; }
  };
  mutable std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
};

}  // namespace tinytcp::stack

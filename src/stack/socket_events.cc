#include "stack/socket_events.hh"

namespace tinytcp::stack {

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

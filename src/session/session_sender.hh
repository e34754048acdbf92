#pragma once

// SessionSender: the sending direction of a Session, in 64-bit positions. It
// keeps what the application wrote in the ReplayBuffer until the peer holds
// it, knows how far this carrier has sent (send_next) and how far any carrier
// ever did (max_sent), the peer's limit (flow control) and the FIN, which
// takes one position after the last data byte. After a reconnection it sends
// again from the first byte the peer lacks; an ACK or a resume claim beyond
// what was ever sent, or behind what was already acknowledged, is refused.
// It makes no frames: the Session asks it what to send next.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <utility>

#include "session/replay_buffer.hh"
#include "session/session_stats.hh"
#include "util/time.hh"

namespace tinytcp::session {

class SessionSender {
 public:
  explicit SessionSender(size_t replay_capacity) : replay_(replay_capacity) {}

  // Application side: takes as much of `data` as the replay buffer holds.
  size_t write(std::string_view data, Instant now);
  // Half-close: a FIN follows the last byte written.
  void request_fin() { fin_requested_ = true; }
  bool fin_requested() const { return fin_requested_; }

  // A new carrier: everything not acknowledged goes again, the FIN too.
  void restart() {
    send_next_ = replay_.acked();
    fin_sent_ = false;
  }
  // Up to `max` bytes to put on the carrier next, within the peer's limit
  // (empty: nothing to send).
  std::string_view next_data(size_t max) const;
  // The position of next_data()'s first byte.
  uint64_t next_position() const { return send_next_; }
  // Up to `max` unacknowledged bytes from `position` (shorter at the ring's
  // wrap point; empty outside acked()..end()).
  std::string_view view_at(uint64_t position, size_t max) const {
    return replay_.view_at(position, max);
  }
  // `n` bytes of next_data() went out. Returns how many of them a carrier
  // had carried before (replayed after a reconnection).
  uint64_t sent(size_t n);
  // The FIN goes next: requested, every byte sent, not yet on this carrier,
  // not acknowledged.
  bool fin_due() const {
    return fin_requested_ && !fin_sent_ && !fin_acked_ && send_next_ == replay_.end();
  }
  uint64_t fin_position() const { return replay_.end(); }
  void fin_sent() {
    fin_sent_ = true;
    fin_ever_sent_ = true;
  }

  // Why the peer's position `received` (from an ACK or a resume claim) is
  // impossible, if it is: beyond what was ever sent, or behind what it had
  // acknowledged (it lost bytes it confirmed).
  std::optional<SessionDrop> check_position(uint64_t received) const;
  // The peer holds everything before `received` (the FIN included when it
  // is one past the data) and accepts data up to `limit`.
  void acknowledge(uint64_t received, uint64_t limit);
  // The peer accepts data up to `limit` (its HELLO or WELCOME).
  void raise_limit(uint64_t limit) { peer_limit_ = std::max(peer_limit_, limit); }
  // A new session at the peer (a client's HELLO): only `limit` until it says more.
  void reset_limit(uint64_t limit) { peer_limit_ = limit; }

  // Last position any carrier carried, counting the FIN.
  uint64_t max_sent_position() const { return max_sent_ + (fin_ever_sent_ ? 1 : 0); }
  uint64_t acked() const { return replay_.acked(); }
  // Sent on this carrier and not yet acknowledged.
  uint64_t in_flight() const { return send_next_ - replay_.acked(); }
  size_t unacked() const { return replay_.unacked(); }
  size_t capacity() const { return replay_.capacity(); }
  bool has_free_space() const { return replay_.free_space() > 0; }
  bool fin_acked() const { return fin_acked_; }
  // Bytes or a FIN the peer does not hold yet.
  bool has_unsent() const { return replay_.unacked() > 0 || (fin_requested_ && !fin_acked_); }
  // How long the oldest unacknowledged byte has waited (0: none waits).
  Duration oldest_unacked_age(Instant now) const;

 private:
  ReplayBuffer replay_;
  uint64_t send_next_ = 0;  // next data position to put on this carrier
  uint64_t max_sent_ = 0;   // highest data position ever put on a carrier
  uint64_t peer_limit_ = 0;
  bool fin_requested_ = false;
  bool fin_sent_ = false;  // on this carrier
  bool fin_ever_sent_ = false;
  bool fin_acked_ = false;
  // (end position of a write, when) for the age of the oldest unacked byte.
  std::deque<std::pair<uint64_t, Instant>> write_times_;
};

}  // namespace tinytcp::session

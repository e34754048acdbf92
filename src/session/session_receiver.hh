#pragma once

// SessionReceiver: the receiving direction of a Session. The peer's data
// bytes go into a bounded ByteStream in order (the carrier is a reliable
// stream: nothing arrives out of order), the FIN takes one position after
// the last of them, and the limit the peer may send up to is what the
// application has read plus the buffer's size. It decides when an ACK is due
// (on request, every ack_interval bytes, or when the limit moved half a
// buffer) and refuses data past the limit or after the FIN, and a FIN at the
// wrong position.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "session/session_stats.hh"
#include "stream/byte_stream.hh"

namespace tinytcp::session {

class SessionReceiver {
 public:
  explicit SessionReceiver(size_t capacity);

  // In-order received bytes (at the ring's wrap point, the part before it).
  std::string_view readable() const { return received_.peek(); }
  // The application read `n` bytes; returns how many there were.
  uint64_t consume(size_t n);
  bool empty() const { return received_.bytes_buffered() == 0; }
  bool fin() const { return fin_; }
  // The peer half-closed and every byte it sent has been read.
  bool finished() const { return fin_ && empty(); }
  // Neither a byte nor the FIN ever came.
  bool nothing_received() const { return received_.bytes_pushed() == 0 && !fin_; }

  // Data and the FIN from the peer: why they cannot be taken, if so.
  std::optional<SessionDrop> on_data(std::string_view body);
  std::optional<SessionDrop> on_fin(uint64_t position);

  // Everything received, the FIN included: what an ACK says we hold.
  uint64_t position() const { return received_.bytes_pushed() + (fin_ ? 1 : 0); }
  // What the peer may send up to.
  uint64_t limit() const { return received_.bytes_popped() + received_.capacity(); }
  // The peer asked for an ACK.
  void request_ack() { ack_requested_ = true; }
  // An ACK of position() and limit() went out.
  void acked() {
    last_ack_position_ = position();
    last_ack_limit_ = limit();
    ack_requested_ = false;
  }
  // An ACK is due: asked for, `ack_interval` bytes since the last one, or a
  // limit half a buffer further (ACKs for data carry the limit anyway, and
  // more window updates would double the ACKs of a bulk transfer).
  bool ack_due(uint64_t ack_interval) const;

 private:
  stream::ByteStream received_;
  bool fin_ = false;
  bool ack_requested_ = false;
  uint64_t last_ack_position_ = 0;
  uint64_t last_ack_limit_ = 0;
};

}  // namespace tinytcp::session

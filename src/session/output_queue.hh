#pragma once

// OutputQueue: what a Session has to write on its carrier, in order. Control
// frames and the 5-byte headers of DATA frames are bytes of its own; a DATA
// frame's body is only a range of positions of the sender's ReplayBuffer,
// which keeps those bytes until the peer acknowledges them anyway. So bulk
// data is not copied into a frame buffer: the owner writes the pieces with
// one gather write (sendmsg), the header and the body where they are.
//
// A range stays valid while queued: the peer cannot acknowledge bytes that
// were not handed to the carrier yet (Session refuses such an ACK), and a
// new carrier clears the queue. Views are made when asked for, from
// positions, so the ring moving its bytes when it grows does not matter.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "session/frame_codec.hh"
#include "session/session_sender.hh"

namespace tinytcp::session {

class OutputQueue {
 public:
  // A whole frame of our own bytes (control).
  void push_frame(FrameType type, std::string_view body);
  // A DATA frame whose body is the replay buffer's [position, position + length).
  void push_data(uint64_t position, size_t length);

  // Bytes queued, headers and bodies.
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The first contiguous piece (empty: nothing queued).
  std::string_view front(const SessionSender& sender) const;
  // Up to `max` pieces in order, into `pieces`; returns how many.
  size_t pieces(const SessionSender& sender, std::string_view* pieces, size_t max) const;
  // `n` bytes from the front went to the carrier.
  void consume(size_t n);
  void clear();
  // The first data position not yet handed to the carrier, when a DATA body
  // is queued: the peer cannot have received it.
  std::optional<uint64_t> first_unsent_data() const;

 private:
  struct Piece {
    bool data;    // a DATA body in the replay buffer; else bytes_[offset..]
    uint64_t at;  // data: replay position; bytes: unused (bytes are in order)
    size_t length;
  };
  std::string_view view(const SessionSender& sender, const Piece& p, size_t offset) const;

  std::string bytes_;  // own bytes of the queued pieces, from bytes_pos_ on
  size_t bytes_pos_ = 0;
  std::deque<Piece> pieces_;
  size_t size_ = 0;
};

}  // namespace tinytcp::session

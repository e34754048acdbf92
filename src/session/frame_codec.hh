#pragma once

// The session layer's framing on the carrier stream (docs/session.md): every
// frame is
//
//    0        1                               5
//   +--------+--------+--------+--------+--------+-----------------+
//   |  type  |        body length (u32, big-endian)  |  body ...   |
//   +--------+--------+--------+--------+--------+-----------------+
//
// DATA bodies hold up to kMaxDataBody application bytes, every other (control)
// frame at most kMaxControlBody. A length past its type's bound or an unknown
// type is refused by the parser before any byte of the body is held, so a
// decoder never buffers more than one maximal frame.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/expected.hh"

namespace tinytcp::session {

enum class FrameType : uint8_t {
  Hello = 1,      // client: open a new session
  Welcome = 2,    // server: the new session's id and secret
  Resume = 3,     // client: resume session id
  Challenge = 4,  // server: its nonce for the resume proof
  Proof = 5,      // client: HMAC proof and how much it has received
  Resumed = 6,    // server: its proof and how much it has received
  Refuse = 7,     // either: this carrier (or session) is refused, with a reason
  Data = 8,       // application bytes
  Ack = 9,        // received position and receive limit; doubles as heartbeat
  Fin = 10,       // the sender's stream ends at this position
  Abort = 11,     // either: the session is reset (like a TCP RST), with a reason
};
const char* to_string(FrameType type);

constexpr size_t kFrameHeaderBytes = 5;
constexpr size_t kMaxDataBody = 16 * 1024;
constexpr size_t kMaxControlBody = 256;

enum class FrameError { UnknownType, Oversized, kCount };
const char* to_string(FrameError error);

struct FrameView {
  FrameType type;
  std::string_view body;  // aliases the parsed bytes
  size_t size;            // header + body: bytes the frame took
};

// Appends one frame. Requires body.size() within the type's bound.
void append_frame(std::string& out, FrameType type, std::string_view body);
// Appends only the header of a frame whose body of `body_length` bytes the
// caller sends right after it (from where those bytes are).
void append_frame_header(std::string& out, FrameType type, size_t body_length);

// Parses the frame at the front of `bytes`: the frame, nullopt when more bytes
// are needed (a truncated frame), or an error that holds for the stream.
Expected<std::optional<FrameView>, FrameError> parse_frame(std::string_view bytes);
// The body length a whole header (>= kFrameHeaderBytes bytes) announces.
size_t frame_body_length(std::string_view header);

// Frames from a stream that arrives in pieces. Holds at most one incomplete
// frame (<= kFrameHeaderBytes + kMaxDataBody bytes).
class FrameDecoder {
 public:
  struct FeedResult {
    std::optional<FrameError> error;  // the stream is bad; the decoder holds nothing
    std::string_view rest;            // bytes not looked at after on_frame returned false
  };
  // Calls on_frame(const FrameView&) for every whole frame of held + `bytes`,
  // stopping early when it returns false; a frame's view is valid only during
  // its call.
  template <typename OnFrame>
  FeedResult feed(std::string_view bytes, OnFrame&& on_frame);
  size_t held() const { return held_.size(); }
  void clear() { held_.clear(); }

 private:
  std::string held_;
};

template <typename OnFrame>
FrameDecoder::FeedResult FrameDecoder::feed(std::string_view bytes, OnFrame&& on_frame) {
  // Complete the held frame first, taking only the bytes it needs.
  while (!held_.empty() && !bytes.empty()) {
    const size_t want = held_.size() < kFrameHeaderBytes
                            ? kFrameHeaderBytes
                            : kFrameHeaderBytes + frame_body_length(held_);
    const size_t take = std::min(want - held_.size(), bytes.size());
    held_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (held_.size() < kFrameHeaderBytes) {
      continue;
    }
    auto parsed = parse_frame(held_);
    if (!parsed) {
      held_.clear();
      return {parsed.error(), {}};
    }
    if (!parsed.value()) {
      continue;  // the header is whole now: the next round takes the body
    }
    const std::string frame = std::move(held_);
    held_.clear();
    if (!on_frame(*parse_frame(frame).value())) {
      return {std::nullopt, bytes};
    }
  }
  while (!bytes.empty()) {
    auto parsed = parse_frame(bytes);
    if (!parsed) {
      return {parsed.error(), {}};
    }
    if (!parsed.value()) {
      held_.assign(bytes);
      return {};
    }
    const FrameView frame = *parsed.value();
    bytes.remove_prefix(frame.size);
    if (!on_frame(frame)) {
      return {std::nullopt, bytes};
    }
  }
  return {};
}

}  // namespace tinytcp::session

#pragma once

// The file-transfer protocol's control messages and their framing. The
// protocol runs over any reliable byte stream (our TCP, kernel TCP):
//
//   sender                                   receiver
//   OFFER  name, size, file id ------------>
//          <------------- ACCEPT resume offset, prefix sha256  (or REJECT reason)
//   START  offset ------------------------->
//   file bytes [offset, size), unframed --->
//   TRAILER sha256 of the whole file ------>
//          <------------- RESULT ok | mismatch | write error
//   ... another OFFER (a directory), or BYE
//
// Every control message is a frame: type (u8), body length (u32, at most
// kMaxFrameBody), body. File bytes are sent raw between START and TRAILER, so
// the bulk of a transfer costs no framing. All integers are big-endian.
//
// Version 2: the OFFER carries a file id (what a partial file is kept under
// for resume) instead of the content's SHA-256, which the sender now computes
// while it sends and puts in the TRAILER; a sender no longer reads the whole
// file once before the first byte leaves (a second for 1 GiB). Resume stays
// safe whatever the id: the receiver proves its prefix with its SHA-256, and
// the TRAILER's digest covers every byte.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "util/expected.hh"
#include "util/hash.hh"

namespace tinytcp::proto {

inline constexpr uint32_t kMagic = 0x54544654;  // "TTFT"
inline constexpr uint16_t kVersion = 2;
inline constexpr uint32_t kMaxFrameBody = 64 * 1024;
inline constexpr size_t kMaxNameBytes = 255;

enum class FrameType : uint8_t {
  Offer = 1,
  Accept = 2,
  Reject = 3,
  Start = 4,
  Trailer = 5,
  Result = 6,
  Bye = 7,
};

struct Offer {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  std::string name;  // base name only; the receiver validates it
  uint64_t size = 0;
  // Identifies this file's content for resume: partial files are kept under
  // it. Any digest the sender derives from the file (file-send: SHA-256 of
  // the size and the first and last MiB).
  Sha256Digest file_id{};
};

struct Accept {
  uint64_t resume_offset = 0;    // bytes the receiver already holds
  Sha256Digest prefix_sha256{};  // SHA-256 of those bytes
};

enum class RejectReason : uint8_t {
  BadVersion = 1,
  BadName = 2,
  Exists = 3,
  TooLarge = 4,
  NoSpace = 5,
  IoError = 6,
  kCount,
};
std::string_view to_string(RejectReason r);

struct Reject {
  RejectReason reason = RejectReason::IoError;
  std::string message;
};

struct Start {
  uint64_t offset = 0;  // where the raw file bytes begin
};

struct Trailer {
  Sha256Digest sha256{};  // of the whole file, offset 0 to size
};

enum class ResultStatus : uint8_t {
  Ok = 1,
  Mismatch = 2,
  WriteError = 3,
  kCount,
};
std::string_view to_string(ResultStatus s);

struct Result {
  ResultStatus status = ResultStatus::Ok;
  Sha256Digest received_sha256{};  // what the receiver computed over the whole file
};

struct Bye {};

using Message = std::variant<Offer, Accept, Reject, Start, Trailer, Result, Bye>;

enum class FrameError {
  UnknownType,
  TooLong,
  Truncated,      // body shorter than its fields
  TrailingBytes,  // body longer than its fields
  BadMagic,
  BadName,
  BadEnum,
  kCount,
};
std::string_view to_string(FrameError e);

// Appends the frame of `message` to `out`.
void encode(const Message& message, std::string& out);

// Decodes one frame body of the given type.
Expected<Message, FrameError> decode(FrameType type, std::string_view body);

// Accumulates stream bytes and yields whole frames. Bounded: a frame whose
// declared body exceeds kMaxFrameBody is an error, never an allocation.
class FrameDecoder {
 public:
  // Takes bytes from `data` up to the end of at most one frame; returns how
  // many it took. Call `take()` after each feed to collect a finished frame.
  size_t feed(std::string_view data);
  // A finished frame, its decode error, or nothing yet.
  std::optional<Expected<Message, FrameError>> take();
  bool mid_frame() const { return !header_.empty() || have_header_; }

 private:
  std::string header_;  // up to 5 bytes
  bool have_header_ = false;
  FrameType type_ = FrameType::Offer;
  uint32_t length_ = 0;
  std::string body_;
  std::optional<Expected<Message, FrameError>> ready_;
};

// True when `name` is acceptable as a file's base name: non-empty, at most
// kMaxNameBytes, not "." or "..", no '/', '\\', NUL or control characters.
bool is_safe_name(std::string_view name);

}  // namespace tinytcp::proto

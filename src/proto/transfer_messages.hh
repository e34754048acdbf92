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
//   ... another OFFER, or BYE
//
// A directory is sent as one OFFER per entry: a directory entry is a path
// ending in '/' (size 0), answered by RESULT ok or REJECT; each file follows
// with its relative path. If the receiver already holds a file of the same
// size under that path, it answers ACCEPT with the `existing` flag and a zero
// digest (it never tells a sender the SHA-256 of a file it has); the sender
// then either confirms it (START at the end, TRAILER with its own file's
// SHA-256: RESULT ok if the receiver's file has it, mismatch if not, and the
// file counts as refused) or declines (DECLINE), and the file counts as
// refused. A receiver from before issue 21 sent the file's SHA-256 there; the
// sender still compares with a digest that is not zero.
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
//
// Version 3: the OFFER's name is a relative path ('/'-separated components,
// each one a safe base name; a trailing '/' names a directory), ACCEPT has a
// flags byte, RESULT and REJECT have more values and DECLINE is new. The
// OFFER's layout is version 2's, so a version 2 receiver decodes it and
// refuses it with REJECT BadVersion; a version 3 receiver refuses a version 2
// OFFER the same way. Only a version 3 sender ever sees the new ACCEPT.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "util/expected.hh"
#include "util/hash.hh"

namespace tinytcp::proto {

inline constexpr uint32_t kMagic = 0x54544654;  // "TTFT"
inline constexpr uint16_t kVersion = 3;
inline constexpr uint32_t kMaxFrameBody = 64 * 1024;
inline constexpr size_t kMaxNameBytes = 255;   // one path component
inline constexpr size_t kMaxPathBytes = 4096;  // a whole relative path
inline constexpr size_t kMaxPathDepth = 64;    // components in a path

enum class FrameType : uint8_t {
  Offer = 1,
  Accept = 2,
  Reject = 3,
  Start = 4,
  Trailer = 5,
  Result = 6,
  Bye = 7,
  Decline = 8,  // sender -> receiver: do not replace the existing file
};

struct Offer {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  // Relative path, '/'-separated (a trailing '/': a directory entry, size 0);
  // the receiver validates it with is_safe_path().
  std::string name;
  uint64_t size = 0;
  // Identifies this file's content for resume: partial files are kept under
  // it. Any digest the sender derives from the file (file-send: SHA-256 of
  // the size and the first and last 64 KiB).
  Sha256Digest file_id{};
};

struct Accept {
  uint64_t resume_offset = 0;    // bytes the receiver already holds
  Sha256Digest prefix_sha256{};  // SHA-256 of those bytes (zero when `existing`)
  // The bytes are a finished file under the final name (of the offered
  // size), not a partial one: the sender may confirm it or must DECLINE.
  bool existing = false;
};

enum class RejectReason : uint8_t {
  BadVersion = 1,
  BadName = 2,
  Exists = 3,
  TooLarge = 4,
  NoSpace = 5,
  IoError = 6,
  BadDirectory = 7,  // a path component is a symlink, not a directory, or cannot be created
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

struct Decline {};

// In FrameType order.
using Message = std::variant<Offer, Accept, Reject, Start, Trailer, Result, Bye, Decline>;

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

// True when `path` is acceptable as an OFFER's path: at most kMaxPathBytes,
// 1 to kMaxPathDepth components separated by single '/', each one a safe
// base name (so no leading '/', no "//", no "." or ".." component); one
// trailing '/' marks a directory entry. Bytes >= 0x80 (UTF-8) are fine.
bool is_safe_path(std::string_view path);
// True when `path` names a directory entry (ends in '/').
inline bool is_directory_path(std::string_view path) {
  return !path.empty() && path.back() == '/';
}
// The components of a path (a trailing '/' adds none).
std::vector<std::string_view> split_path(std::string_view path);

}  // namespace tinytcp::proto

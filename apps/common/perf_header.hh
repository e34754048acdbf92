#pragma once

// The first 16 bytes a tt-perf client sends on every connection: they tell
// the server what to do with the rest.
//
//    0      4        5      6         8                12               16
//   +------+--------+------+---------+----------------+----------------+
//   | TTPF | ver 1  | mode | 0 0     | request bytes  | reply bytes    |
//   +------+--------+------+---------+----------------+----------------+
//   (sizes big-endian)
//
//   sink   read everything; after the client's FIN answer with the byte
//          count (8 bytes, big-endian) and close
//   echo   send every byte back; close after the client's FIN
//   reply  for every `request` bytes received send `reply` bytes
//          (rr: 1 and 1; crr: 64 and 8192); close after the client's FIN

#include <cstdint>
#include <string>
#include <string_view>

#include "util/expected.hh"

namespace tinytcp::apps {

enum class PerfMode : uint8_t { Sink = 1, Echo = 2, Reply = 3 };

enum class PerfHeaderError { Truncated, BadMagic, BadVersion, BadMode, BadSize };
const char* to_string(PerfHeaderError e);

struct PerfHeader {
  static constexpr size_t kSize = 16;
  static constexpr uint32_t kMaxRequest = 1 << 20;
  static constexpr uint32_t kMaxReply = 16 << 20;

  PerfMode mode = PerfMode::Sink;
  uint32_t request_bytes = 0;  // reply mode: 1..kMaxRequest; otherwise 0
  uint32_t reply_bytes = 0;    // reply mode: 0..kMaxReply; otherwise 0

  std::string serialize() const;
};

// Parses the first kSize bytes of `bytes` (Truncated while fewer arrived).
Expected<PerfHeader, PerfHeaderError> parse_perf_header(std::string_view bytes);

// The sink's answer: the byte count, 8 bytes big-endian.
std::string serialize_count(uint64_t count);
uint64_t parse_count(std::string_view eight_bytes);

}  // namespace tinytcp::apps

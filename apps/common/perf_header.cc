#include "common/perf_header.hh"

namespace tinytcp::apps {

namespace {

constexpr std::string_view kMagic = "TTPF";
constexpr uint8_t kVersion = 1;

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

uint64_t get_be(std::string_view bytes) {
  uint64_t v = 0;
  for (const char c : bytes) {
    v = (v << 8) | static_cast<uint8_t>(c);
  }
  return v;
}

}  // namespace

const char* to_string(PerfHeaderError e) {
  switch (e) {
    case PerfHeaderError::Truncated:
      return "truncated";
    case PerfHeaderError::BadMagic:
      return "bad magic (not a tt-perf client)";
    case PerfHeaderError::BadVersion:
      return "unknown version";
    case PerfHeaderError::BadMode:
      return "unknown mode";
    case PerfHeaderError::BadSize:
      return "request or reply size out of range";
  }
  return "?";
}

std::string PerfHeader::serialize() const {
  std::string out(kMagic);
  out.push_back(static_cast<char>(kVersion));
  out.push_back(static_cast<char>(mode));
  out.append(2, '\0');
  put_u32(out, request_bytes);
  put_u32(out, reply_bytes);
  return out;
}

Expected<PerfHeader, PerfHeaderError> parse_perf_header(std::string_view bytes) {
  if (bytes.size() >= kMagic.size() && bytes.substr(0, kMagic.size()) != kMagic) {
    return make_unexpected(PerfHeaderError::BadMagic);
  }
  if (bytes.size() < PerfHeader::kSize) {
    // A prefix of the magic is not yet wrong.
    if (kMagic.substr(0, std::min(bytes.size(), kMagic.size())) !=
        bytes.substr(0, std::min(bytes.size(), kMagic.size()))) {
      return make_unexpected(PerfHeaderError::BadMagic);
    }
    return make_unexpected(PerfHeaderError::Truncated);
  }
  if (static_cast<uint8_t>(bytes[4]) != kVersion) {
    return make_unexpected(PerfHeaderError::BadVersion);
  }
  PerfHeader h;
  const auto mode = static_cast<uint8_t>(bytes[5]);
  if (mode < static_cast<uint8_t>(PerfMode::Sink) || mode > static_cast<uint8_t>(PerfMode::Reply) ||
      bytes[6] != 0 || bytes[7] != 0) {
    return make_unexpected(PerfHeaderError::BadMode);
  }
  h.mode = static_cast<PerfMode>(mode);
  h.request_bytes = static_cast<uint32_t>(get_be(bytes.substr(8, 4)));
  h.reply_bytes = static_cast<uint32_t>(get_be(bytes.substr(12, 4)));
  const bool reply = h.mode == PerfMode::Reply;
  if (reply ? (h.request_bytes == 0 || h.request_bytes > PerfHeader::kMaxRequest ||
               h.reply_bytes > PerfHeader::kMaxReply)
            : (h.request_bytes != 0 || h.reply_bytes != 0)) {
    return make_unexpected(PerfHeaderError::BadSize);
  }
  return h;
}

std::string serialize_count(uint64_t count) {
  std::string out;
  put_u32(out, static_cast<uint32_t>(count >> 32));
  put_u32(out, static_cast<uint32_t>(count));
  return out;
}

uint64_t parse_count(std::string_view eight_bytes) {
  return get_be(eight_bytes.substr(0, 8));
}

}  // namespace tinytcp::apps

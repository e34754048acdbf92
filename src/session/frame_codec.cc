#include "session/frame_codec.hh"

#include "util/buffer.hh"
#include "util/check.hh"

namespace tinytcp::session {

const char* to_string(FrameType type) {
  switch (type) {
    case FrameType::Hello:
      return "HELLO";
    case FrameType::Welcome:
      return "WELCOME";
    case FrameType::Resume:
      return "RESUME";
    case FrameType::Challenge:
      return "CHALLENGE";
    case FrameType::Proof:
      return "PROOF";
    case FrameType::Resumed:
      return "RESUMED";
    case FrameType::Refuse:
      return "REFUSE";
    case FrameType::Data:
      return "DATA";
    case FrameType::Ack:
      return "ACK";
    case FrameType::Fin:
      return "FIN";
    case FrameType::Abort:
      return "ABORT";
  }
  return "unknown";
}

const char* to_string(FrameError error) {
  switch (error) {
    case FrameError::UnknownType:
      return "unknown frame type";
    case FrameError::Oversized:
      return "oversized frame";
    case FrameError::kCount:
      break;
  }
  return "unknown";
}

namespace {

size_t max_body(FrameType type) {
  return type == FrameType::Data ? kMaxDataBody : kMaxControlBody;
}

bool known_type(uint8_t t) {
  return t >= static_cast<uint8_t>(FrameType::Hello) && t <= static_cast<uint8_t>(FrameType::Abort);
}

}  // namespace

void append_frame_header(std::string& out, FrameType type, size_t body_length) {
  TINYTCP_CHECK(body_length <= max_body(type));
  char header[kFrameHeaderBytes];
  BufferWriter w(header, sizeof header);
  w.u8(static_cast<uint8_t>(type));
  w.u32(static_cast<uint32_t>(body_length));
  out.append(header, sizeof header);
}

void append_frame(std::string& out, FrameType type, std::string_view body) {
  append_frame_header(out, type, body.size());
  out.append(body);
}

size_t frame_body_length(std::string_view header) {
  BufferReader r(header.substr(1, 4));
  return r.u32();
}

Expected<std::optional<FrameView>, FrameError> parse_frame(std::string_view bytes) {
  if (bytes.empty()) {
    return std::optional<FrameView>{};
  }
  // The type is checked as soon as its byte is here, the length as soon as the
  // header is whole: garbage is refused without waiting for more of it.
  const auto raw_type = static_cast<uint8_t>(bytes[0]);
  if (!known_type(raw_type)) {
    return make_unexpected(FrameError::UnknownType);
  }
  if (bytes.size() < kFrameHeaderBytes) {
    return std::optional<FrameView>{};
  }
  const auto type = static_cast<FrameType>(raw_type);
  const size_t length = frame_body_length(bytes);
  if (length > max_body(type)) {
    return make_unexpected(FrameError::Oversized);
  }
  if (bytes.size() - kFrameHeaderBytes < length) {
    return std::optional<FrameView>{};
  }
  return std::optional<FrameView>{
      FrameView{type, bytes.substr(kFrameHeaderBytes, length), kFrameHeaderBytes + length}};
}

}  // namespace tinytcp::session

#include "proto/transfer_messages.hh"

#include <algorithm>

#include "util/buffer.hh"

namespace tinytcp::proto {

std::string_view to_string(RejectReason r) {
  switch (r) {
    case RejectReason::BadVersion:
      return "unsupported protocol version";
    case RejectReason::BadName:
      return "file name refused";
    case RejectReason::Exists:
      return "file exists (use --force to overwrite)";
    case RejectReason::TooLarge:
      return "file larger than the receiver's --max-size";
    case RejectReason::NoSpace:
      return "not enough free space at the receiver";
    case RejectReason::IoError:
      return "receiver I/O error";
    case RejectReason::BadDirectory:
      return "a directory on the path is a symlink, not a directory, or cannot be created";
    case RejectReason::kCount:
      break;
  }
  return "unknown reason";
}

std::string_view to_string(ResultStatus s) {
  switch (s) {
    case ResultStatus::Ok:
      return "ok";
    case ResultStatus::Mismatch:
      return "sha256 mismatch";
    case ResultStatus::WriteError:
      return "receiver write error";
    case ResultStatus::kCount:
      break;
  }
  return "unknown status";
}

std::string_view to_string(FrameError e) {
  switch (e) {
    case FrameError::UnknownType:
      return "unknown frame type";
    case FrameError::TooLong:
      return "frame longer than the limit";
    case FrameError::Truncated:
      return "frame body truncated";
    case FrameError::TrailingBytes:
      return "frame body has trailing bytes";
    case FrameError::BadMagic:
      return "bad magic (not a tinytcp file-transfer peer)";
    case FrameError::BadName:
      return "bad file name";
    case FrameError::BadEnum:
      return "bad enumerated value";
    case FrameError::kCount:
      break;
  }
  return "unknown frame error";
}

bool is_safe_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes || name == "." || name == "..") {
    return false;
  }
  return std::none_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return c == '/' || c == '\\' || u < 0x20 || u == 0x7f;
  });
}

bool is_safe_path(std::string_view path) {
  if (path.empty() || path.size() > kMaxPathBytes) {
    return false;
  }
  if (is_directory_path(path)) {
    path.remove_suffix(1);
  }
  size_t depth = 0;
  for (;;) {
    const size_t slash = path.find('/');
    // An empty component (leading '/', "//", or a lone "/") fails here.
    if (!is_safe_name(path.substr(0, slash)) || ++depth > kMaxPathDepth) {
      return false;
    }
    if (slash == std::string_view::npos) {
      return true;
    }
    path.remove_prefix(slash + 1);
  }
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  if (is_directory_path(path)) {
    path.remove_suffix(1);
  }
  while (!path.empty()) {
    const size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) {
      break;
    }
    path.remove_prefix(slash + 1);
  }
  return out;
}

namespace {

std::string_view digest_view(const Sha256Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};  // bytes of a byte array
}

void read_digest(BufferReader& r, Sha256Digest& out) {
  const auto bytes = r.bytes(out.size());
  if (bytes.size() == out.size()) {
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(out.data()));
  }
}

struct BodySize {
  size_t operator()(const Offer& m) const { return 4 + 2 + 2 + m.name.size() + 8 + 32; }
  size_t operator()(const Accept&) const { return 8 + 32 + 1; }
  size_t operator()(const Reject& m) const { return 1 + 2 + m.message.size(); }
  size_t operator()(const Start&) const { return 8; }
  size_t operator()(const Trailer&) const { return 32; }
  size_t operator()(const Result&) const { return 1 + 32; }
  size_t operator()(const Bye&) const { return 0; }
  size_t operator()(const Decline&) const { return 0; }
};

struct BodyWriter {
  BufferWriter& w;
  void operator()(const Offer& m) const {
    w.u32(m.magic);
    w.u16(m.version);
    w.u16(static_cast<uint16_t>(m.name.size()));
    w.bytes(m.name);
    w.u32(static_cast<uint32_t>(m.size >> 32));
    w.u32(static_cast<uint32_t>(m.size));
    w.bytes(digest_view(m.file_id));
  }
  void operator()(const Accept& m) const {
    w.u32(static_cast<uint32_t>(m.resume_offset >> 32));
    w.u32(static_cast<uint32_t>(m.resume_offset));
    w.bytes(digest_view(m.prefix_sha256));
    w.u8(m.existing ? 1 : 0);
  }
  void operator()(const Reject& m) const {
    w.u8(static_cast<uint8_t>(m.reason));
    w.u16(static_cast<uint16_t>(m.message.size()));
    w.bytes(m.message);
  }
  void operator()(const Start& m) const {
    w.u32(static_cast<uint32_t>(m.offset >> 32));
    w.u32(static_cast<uint32_t>(m.offset));
  }
  void operator()(const Trailer& m) const { w.bytes(digest_view(m.sha256)); }
  void operator()(const Result& m) const {
    w.u8(static_cast<uint8_t>(m.status));
    w.bytes(digest_view(m.received_sha256));
  }
  void operator()(const Bye&) const {}
  void operator()(const Decline&) const {}
};

FrameType type_of(const Message& m) {
  return static_cast<FrameType>(m.index() + 1);  // variant order follows FrameType
}

uint64_t read_u64(BufferReader& r) {
  const uint64_t hi = r.u32();
  return (hi << 32) | r.u32();
}

}  // namespace

void encode(const Message& message, std::string& out) {
  Message clipped = message;
  // Names and messages longer than their length fields allow are cut, not
  // wrapped around: an over-long name is then refused by the receiver.
  if (auto* offer = std::get_if<Offer>(&clipped); offer && offer->name.size() > 0xffff) {
    offer->name.resize(0xffff);
  }
  if (auto* reject = std::get_if<Reject>(&clipped); reject && reject->message.size() > 1024) {
    reject->message.resize(1024);
  }
  const size_t body = std::visit(BodySize{}, clipped);
  const size_t at = out.size();
  out.resize(at + 5 + body);
  BufferWriter w(out.data() + at, 5 + body);
  w.u8(static_cast<uint8_t>(type_of(clipped)));
  w.u32(static_cast<uint32_t>(body));
  std::visit(BodyWriter{w}, clipped);
}

Expected<Message, FrameError> decode(FrameType type, std::string_view body) {
  BufferReader r(body);
  Message out;
  switch (type) {
    case FrameType::Offer: {
      Offer m;
      m.magic = r.u32();
      m.version = r.u16();
      const uint16_t name_len = r.u16();
      m.name = std::string(r.bytes(name_len));
      m.size = read_u64(r);
      read_digest(r, m.file_id);
      if (r.ok() && m.magic != kMagic) {
        return make_unexpected(FrameError::BadMagic);
      }
      out = std::move(m);
      break;
    }
    case FrameType::Accept: {
      Accept m;
      m.resume_offset = read_u64(r);
      read_digest(r, m.prefix_sha256);
      const uint8_t flags = r.u8();
      if (r.ok() && flags > 1) {
        return make_unexpected(FrameError::BadEnum);
      }
      m.existing = flags == 1;
      out = m;
      break;
    }
    case FrameType::Reject: {
      Reject m;
      const uint8_t reason = r.u8();
      const uint16_t len = r.u16();
      m.message = std::string(r.bytes(len));
      if (reason == 0 || reason >= static_cast<uint8_t>(RejectReason::kCount)) {
        return make_unexpected(r.ok() ? FrameError::BadEnum : FrameError::Truncated);
      }
      m.reason = static_cast<RejectReason>(reason);
      out = std::move(m);
      break;
    }
    case FrameType::Start: {
      Start m;
      m.offset = read_u64(r);
      out = m;
      break;
    }
    case FrameType::Trailer: {
      Trailer m;
      read_digest(r, m.sha256);
      out = m;
      break;
    }
    case FrameType::Result: {
      Result m;
      const uint8_t status = r.u8();
      read_digest(r, m.received_sha256);
      if (status == 0 || status >= static_cast<uint8_t>(ResultStatus::kCount)) {
        return make_unexpected(r.ok() ? FrameError::BadEnum : FrameError::Truncated);
      }
      m.status = static_cast<ResultStatus>(status);
      out = m;
      break;
    }
    case FrameType::Bye:
      out = Bye{};
      break;
    case FrameType::Decline:
      out = Decline{};
      break;
    default:
      return make_unexpected(FrameError::UnknownType);
  }
  if (!r.ok()) {
    return make_unexpected(FrameError::Truncated);
  }
  if (r.remaining() != 0) {
    return make_unexpected(FrameError::TrailingBytes);
  }
  return out;
}

size_t FrameDecoder::feed(std::string_view data) {
  size_t used = 0;
  if (ready_) {
    return 0;  // the caller must take() the finished frame first
  }
  if (!have_header_) {
    const size_t n = std::min(data.size(), 5 - header_.size());
    header_.append(data.substr(0, n));
    used += n;
    if (header_.size() < 5) {
      return used;
    }
    BufferReader r(header_);
    const uint8_t type = r.u8();
    length_ = r.u32();
    header_.clear();
    if (type == 0 || type > static_cast<uint8_t>(FrameType::Decline)) {
      ready_ = make_unexpected(FrameError::UnknownType);
      return used;
    }
    if (length_ > kMaxFrameBody) {
      ready_ = make_unexpected(FrameError::TooLong);
      return used;
    }
    type_ = static_cast<FrameType>(type);
    have_header_ = true;
    body_.clear();
  }
  const size_t n = std::min<size_t>(data.size() - used, length_ - body_.size());
  body_.append(data.substr(used, n));
  used += n;
  if (body_.size() == length_) {
    ready_ = decode(type_, body_);
    have_header_ = false;
  }
  return used;
}

std::optional<Expected<Message, FrameError>> FrameDecoder::take() {
  auto out = std::move(ready_);
  ready_.reset();
  return out;
}

}  // namespace tinytcp::proto

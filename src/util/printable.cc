#include "util/printable.hh"

#include <cstdint>

namespace tinytcp {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// The length of the valid UTF-8 sequence at the start of `s` and its code
// point, or 0 when it does not start with one.
size_t decode_utf8(std::string_view s, uint32_t& code_point) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t b0 = byte(0);
  size_t n = 0;
  uint32_t min = 0;
  if (b0 < 0x80) {
    code_point = b0;
    return 1;
  }
  if ((b0 & 0xe0) == 0xc0) {
    n = 2;
    min = 0x80;
    code_point = b0 & 0x1fu;
  } else if ((b0 & 0xf0) == 0xe0) {
    n = 3;
    min = 0x800;
    code_point = b0 & 0x0fu;
  } else if ((b0 & 0xf8) == 0xf0) {
    n = 4;
    min = 0x10000;
    code_point = b0 & 0x07u;
  } else {
    return 0;  // a continuation byte, or 0xf8-0xff
  }
  if (s.size() < n) {
    return 0;
  }
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xc0) != 0x80) {
      return 0;
    }
    code_point = (code_point << 6) | (byte(i) & 0x3fu);
  }
  if (code_point < min || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) {
    return 0;
  }
  return n;
}

bool is_bidi_control(uint32_t c) {
  return c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

void append_byte_escape(std::string& out, uint8_t b) {
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xf];
}

void append_code_point_escape(std::string& out, uint32_t c) {
  out += "\\u{";
  for (int shift = 12; shift >= 0; shift -= 4) {
    out += kHex[(c >> shift) & 0xf];
  }
  out += '}';
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    uint32_t c = 0;
    const size_t n = decode_utf8(text, c);
    if (n == 0) {
      append_byte_escape(out, static_cast<uint8_t>(text[0]));
      text.remove_prefix(1);
      continue;
    }
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      append_byte_escape(out, static_cast<uint8_t>(c));
    } else if ((c >= 0x80 && c <= 0x9f) || is_bidi_control(c)) {
      append_code_point_escape(out, c);
    } else {
      out.append(text.substr(0, n));
    }
    text.remove_prefix(n);
  }
  return out;
}

bool is_valid_utf8(std::string_view text) {
  while (!text.empty()) {
    uint32_t c = 0;
    const size_t n = decode_utf8(text, c);
    if (n == 0) {
      return false;
    }
    text.remove_prefix(n);
  }
  return true;
}

}  // namespace tinytcp

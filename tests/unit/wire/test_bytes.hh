#pragma once

// Helpers for tests of wire formats: bytes from hex text and back.

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace tinytcp::test {

// "45 00 0a" -> the bytes 0x45 0x00 0x0a; whitespace is ignored.
inline std::string from_hex(std::string_view hex) {
  std::string out;
  int nibble = -1;
  for (const char c : hex) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      continue;
    }
    const int v =
        std::isdigit(static_cast<unsigned char>(c)) != 0 ? c - '0' : (c | 0x20) - 'a' + 10;
    if (nibble < 0) {
      nibble = v;
    } else {
      out.push_back(static_cast<char>((nibble << 4) | v));
      nibble = -1;
    }
  }
  return out;
}

inline std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0) {
      out.push_back(' ');
    }
    const auto b = static_cast<unsigned char>(bytes[i]);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

inline std::string flip_bit(std::string bytes, size_t bit) {
  bytes[bit / 8] = static_cast<char>(bytes[bit / 8] ^ (1 << (bit % 8)));
  return bytes;
}

}  // namespace tinytcp::test

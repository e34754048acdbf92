#include "util/checksum.hh"

#include <cstring>

namespace tinytcp {

void InternetChecksum::add(std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());  // bytes, not a header
  size_t n = data.size();
  if (n == 0) {
    return;
  }
  if (odd_) {
    sum_ += *p;
    ++p;
    --n;
    odd_ = false;
  }
  if (n >= 32) {
    // The bulk in native byte order, eight bytes per load, summed as 32-bit
    // halves into four 64-bit accumulators (no carries lost below 2^31 loads),
    // then folded to 16 bits. RFC 1071 §2(B): the ones'-complement sum is
    // byte-order independent up to swapping its two bytes, so on a
    // little-endian host the folded sum is swapped into network order.
    uint64_t acc[4] = {0, 0, 0, 0};
    while (n >= 32) {
      for (size_t i = 0; i < 4; ++i) {
        uint64_t w = 0;
        std::memcpy(&w, p + 8 * i, 8);
        acc[i] += (w & 0xffffffffu) + (w >> 32);
      }
      p += 32;
      n -= 32;
    }
    uint64_t s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    while (s >> 16) {
      s = (s & 0xffff) + (s >> 16);
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    s = ((s & 0xff) << 8) | (s >> 8);
#endif
    sum_ += s;
  }
  // The rest as 32-bit big-endian chunks into the 64-bit accumulator; folding
  // is deferred, which RFC 1071 §2(C) allows.
  while (n >= 4) {
    const uint32_t w =
        (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
    sum_ += w;
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    sum_ += (uint32_t{p[0]} << 8) | uint32_t{p[1]};
    p += 2;
    n -= 2;
  }
  if (n == 1) {
    sum_ += uint32_t{p[0]} << 8;
    odd_ = true;
  }
}

void InternetChecksum::add_u16(uint16_t v) {
  if (odd_) {
    // Keep byte alignment as if the value's bytes followed the odd byte.
    sum_ += static_cast<uint32_t>(v >> 8);
    sum_ += uint32_t{static_cast<uint8_t>(v)} << 8;
  } else {
    sum_ += v;
  }
}

uint16_t InternetChecksum::fold() const {
  uint64_t s = sum_;
  while (s >> 16) {
    s = (s & 0xffff) + (s >> 16);
  }
  return static_cast<uint16_t>(s);
}

uint16_t InternetChecksum::value() const {
  return static_cast<uint16_t>(~fold());
}

uint16_t checksum_adjust(uint16_t checksum, uint16_t old_field, uint16_t new_field) {
  uint32_t s = static_cast<uint16_t>(~checksum);
  s += static_cast<uint16_t>(~old_field);
  s += new_field;
  while (s >> 16) {
    s = (s & 0xffff) + (s >> 16);
  }
  return static_cast<uint16_t>(~s);
}

}  // namespace tinytcp

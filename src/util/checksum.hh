#pragma once

// The Internet checksum (RFC 1071): ones'-complement sum of 16-bit words.
// Accumulates across calls, so a pseudo-header, a header and a payload held in
// different buffers are summed without copying them together. Odd-length
// pieces are handled as if the bytes were contiguous.

#include <cstdint>
#include <string_view>

namespace tinytcp {

class InternetChecksum {
 public:
  void add(std::string_view data);
  void add_u16(uint16_t v);
  void add_u32(uint32_t v) {
    add_u16(static_cast<uint16_t>(v >> 16));
    add_u16(static_cast<uint16_t>(v));
  }
  // The checksum to put in a header: complement of the folded sum.
  uint16_t value() const;
  // True when the summed bytes included a correct checksum field.
  bool verifies() const { return fold() == 0xffff; }

 private:
  uint16_t fold() const;

  uint64_t sum_ = 0;
  bool odd_ = false;  // an odd number of bytes so far: the next byte is a low byte
};

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), the checksum after one 16-bit field
// of the covered data changes from `old_field` to `new_field`.
uint16_t checksum_adjust(uint16_t checksum, uint16_t old_field, uint16_t new_field);

}  // namespace tinytcp

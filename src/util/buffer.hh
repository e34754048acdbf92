#pragma once

// Bounds-checked, big-endian (network order) access to packet bytes.
//
// BufferReader never reads past its view: a read that would run off the end
// returns zero (or an empty view), sets a sticky error and leaves the position
// at the end, so a parser reads every field and checks `ok()` once. This is how
// wire/ parses headers without reinterpret_cast or packed structs.
//
// BufferWriter writes into a caller-provided span; writes that do not fit set
// a sticky error and write nothing, so a serializer can check once at the end.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tinytcp {

class BufferReader {
 public:
  explicit BufferReader(std::string_view data) : data_(data) {}

  bool ok() const { return ok_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  std::string_view rest() const { return data_.substr(pos_); }

  uint8_t u8() {
    if (!need(1)) {
      return 0;
    }
    return static_cast<uint8_t>(data_[pos_++]);
  }
  uint16_t u16() {
    if (!need(2)) {
      return 0;
    }
    const auto v = static_cast<uint16_t>((byte_at(pos_) << 8) | byte_at(pos_ + 1));
    pos_ += 2;
    return v;
  }
  uint32_t u32() {
    if (!need(4)) {
      return 0;
    }
    const uint32_t v = (uint32_t{byte_at(pos_)} << 24) | (uint32_t{byte_at(pos_ + 1)} << 16) |
                       (uint32_t{byte_at(pos_ + 2)} << 8) | uint32_t{byte_at(pos_ + 3)};
    pos_ += 4;
    return v;
  }
  std::string_view bytes(size_t n) {
    if (!need(n)) {
      return {};
    }
    const auto v = data_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  void skip(size_t n) { static_cast<void>(bytes(n)); }

 private:
  bool need(size_t n) {
    if (!ok_ || n > data_.size() - pos_) {
      ok_ = false;
      pos_ = data_.size();
      return false;
    }
    return true;
  }
  uint8_t byte_at(size_t i) const { return static_cast<uint8_t>(data_[i]); }

  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

class BufferWriter {
 public:
  BufferWriter(char* out, size_t capacity) : out_(out), capacity_(capacity) {}

  bool ok() const { return ok_; }
  size_t size() const { return pos_; }
  size_t remaining() const { return capacity_ - pos_; }
  std::string_view written() const { return {out_, pos_}; }
  char* data() { return out_; }

  void u8(uint8_t v) {
    if (need(1)) {
      out_[pos_++] = static_cast<char>(v);
    }
  }
  void u16(uint16_t v) {
    if (need(2)) {
      put16(pos_, v);
      pos_ += 2;
    }
  }
  void u32(uint32_t v) {
    if (need(4)) {
      out_[pos_] = static_cast<char>(v >> 24);
      out_[pos_ + 1] = static_cast<char>(v >> 16);
      out_[pos_ + 2] = static_cast<char>(v >> 8);
      out_[pos_ + 3] = static_cast<char>(v);
      pos_ += 4;
    }
  }
  void bytes(std::string_view v) {
    if (need(v.size()) && !v.empty()) {
      std::memcpy(out_ + pos_, v.data(), v.size());
      pos_ += v.size();
    }
  }
  void zeros(size_t n) {
    if (need(n) && n > 0) {
      std::memset(out_ + pos_, 0, n);
      pos_ += n;
    }
  }
  // Overwrites a 16-bit field already written (a checksum filled in last).
  void patch_u16(size_t offset, uint16_t v) {
    if (offset + 2 > pos_) {
      ok_ = false;
      return;
    }
    put16(offset, v);
  }

 private:
  bool need(size_t n) {
    if (!ok_ || n > capacity_ - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }
  void put16(size_t at, uint16_t v) {
    out_[at] = static_cast<char>(v >> 8);
    out_[at + 1] = static_cast<char>(v);
  }

  char* out_;
  size_t capacity_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace tinytcp

#include "stream/byte_stream.hh"

#include <cstring>

#include "util/check.hh"

namespace tinytcp::stream {

ByteStream::ByteStream(uint64_t capacity)
    : capacity_(capacity), buffer_(new char[capacity > 0 ? capacity : 1]) {}

void ByteStream::copy_in(uint64_t offset, std::string_view data) {
  if (data.empty()) {
    return;
  }
  uint64_t at = head_ + size_ + offset;
  if (at >= capacity_) {
    at -= capacity_;
    if (at >= capacity_) {
      at -= capacity_;
    }
  }
  const uint64_t first = capacity_ - at;
  if (data.size() <= first) {
    std::memcpy(buffer_.get() + at, data.data(), data.size());
  } else {
    std::memcpy(buffer_.get() + at, data.data(), first);
    std::memcpy(buffer_.get(), data.data() + first, data.size() - first);
  }
}

uint64_t ByteStream::push(std::string_view data) {
  if (closed_ || error_) {
    return 0;
  }
  const uint64_t avail = capacity_ - size_;
  const uint64_t n = data.size() < avail ? data.size() : avail;
  copy_in(0, data.substr(0, n));
  size_ += n;
  bytes_pushed_ += n;
  ahead_ = ahead_ > n ? ahead_ - n : 0;
  return n;
}

void ByteStream::write_ahead(uint64_t offset, std::string_view data) {
  TINYTCP_DCHECK(offset + data.size() <= available_capacity());
  copy_in(offset, data);
  if (!data.empty() && offset + data.size() > ahead_) {
    ahead_ = offset + data.size();
  }
}

void ByteStream::commit(uint64_t n) {
  TINYTCP_DCHECK(n <= available_capacity());
  if (closed_ || error_) {
    return;
  }
  size_ += n;
  bytes_pushed_ += n;
  ahead_ = ahead_ > n ? ahead_ - n : 0;
}

void ByteStream::close() {
  closed_ = true;
}

void ByteStream::set_error() {
  error_ = true;
}

}  // namespace tinytcp::stream

#include "stream/byte_stream.hh"

#include <algorithm>
#include <cstring>

#include "util/check.hh"

namespace tinytcp::stream {

ByteStream::ByteStream(uint64_t capacity, uint64_t initial_ring)
    : capacity_(capacity),
      buffer_(new char[capacity > 0 ? capacity : 1]),
      ring_(std::min(capacity, std::max<uint64_t>(initial_ring, 1))) {}

void ByteStream::reserve(uint64_t used) {
  if (used <= ring_) {
    return;
  }
  TINYTCP_DCHECK(used <= capacity_);
  const uint64_t grown = std::min(capacity_, std::max(used, 2 * ring_));
  const uint64_t occupied = size_ + ahead_;  // from head_: readable, then written ahead
  if (head_ + occupied > ring_) {
    // Wrapped: [head_, ring_) then [0, wrapped). The first bytes of the
    // wrapped part go to the new room after ring_, the rest to the front.
    const uint64_t wrapped = head_ + occupied - ring_;
    const uint64_t moved = std::min(wrapped, grown - ring_);
    std::memcpy(buffer_.get() + ring_, buffer_.get(), moved);
    std::memmove(buffer_.get(), buffer_.get() + moved, wrapped - moved);
  }
  ring_ = grown;
}

void ByteStream::copy_in(uint64_t offset, std::string_view data) {
  if (data.empty()) {
    return;
  }
  uint64_t at = head_ + size_ + offset;
  if (at >= ring_) {
    at -= ring_;
    if (at >= ring_) {
      at -= ring_;
    }
  }
  const uint64_t first = ring_ - at;
  if (data.size() <= first) {
    std::memcpy(buffer_.get() + at, data.data(), data.size());
  } else {
    std::memcpy(buffer_.get() + at, data.data(), first);
    std::memcpy(buffer_.get(), data.data() + first, data.size() - first);
  }
}

uint64_t ByteStream::push(std::string_view data) {
  region_ = 0;
  if (closed_ || error_) {
    return 0;
  }
  const uint64_t avail = capacity_ - size_;
  const uint64_t n = data.size() < avail ? data.size() : avail;
  reserve(size_ + std::max(n, ahead_));
  copy_in(0, data.substr(0, n));
  size_ += n;
  bytes_pushed_ += n;
  ahead_ = ahead_ > n ? ahead_ - n : 0;
  return n;
}

void ByteStream::write_ahead(uint64_t offset, std::string_view data) {
  region_ = 0;
  TINYTCP_DCHECK(offset + data.size() <= available_capacity());
  reserve(size_ + std::max<uint64_t>(offset + data.size(), ahead_));
  copy_in(offset, data);
  if (!data.empty() && offset + data.size() > ahead_) {
    ahead_ = offset + data.size();
  }
}

void ByteStream::commit(uint64_t n) {
  region_ = 0;
  TINYTCP_DCHECK(n <= available_capacity());
  if (closed_ || error_) {
    return;
  }
  reserve(size_ + std::max(n, ahead_));
  size_ += n;
  bytes_pushed_ += n;
  ahead_ = ahead_ > n ? ahead_ - n : 0;
}

WriteRegion ByteStream::write_region(uint64_t max) {
  region_ = 0;
  if (closed_ || error_ || ahead_ > 0) {
    return {};
  }
  const uint64_t n = std::min(max, capacity_ - size_);
  if (n == 0) {
    return {};
  }
  reserve(size_ + n);
  uint64_t at = head_ + size_;
  if (at >= ring_) {
    at -= ring_;
  }
  WriteRegion r;
  r.first = buffer_.get() + at;
  r.first_size = std::min(n, ring_ - at);
  if (r.first_size < n) {
    r.second = buffer_.get();
    r.second_size = n - r.first_size;
  }
  region_ = n;
  return r;
}

bool ByteStream::commit_region(uint64_t n) {
  if (n > region_) {
    return false;
  }
  region_ = 0;
  size_ += n;
  bytes_pushed_ += n;
  return true;
}

void ByteStream::close() {
  region_ = 0;
  closed_ = true;
}

void ByteStream::set_error() {
  region_ = 0;
  error_ = true;
}

}  // namespace tinytcp::stream

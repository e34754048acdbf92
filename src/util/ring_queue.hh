#pragma once

// RingQueue: a FIFO with random access, stored in one power-of-two ring that
// grows by doubling and never shrinks. Unlike std::deque it allocates nothing
// once it has reached its working size, so a queue that is filled and drained
// at line rate (the sender's outstanding segments) costs no allocation per
// element in steady state.

#include <cstddef>
#include <memory>
#include <utility>

#include "util/check.hh"

namespace tinytcp {

template <typename T>
class RingQueue {
 public:
  RingQueue() = default;
  explicit RingQueue(size_t initial_capacity) { reserve(initial_capacity); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return mask_ + (data_ ? 1 : 0); }

  T& operator[](size_t i) {
    TINYTCP_DCHECK(i < size_);
    return data_[(head_ + i) & mask_];
  }
  const T& operator[](size_t i) const {
    TINYTCP_DCHECK(i < size_);
    return data_[(head_ + i) & mask_];
  }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T value) {
    if (size_ == capacity()) {
      reserve(size_ == 0 ? 16 : size_ * 2);
    }
    data_[(head_ + size_) & mask_] = std::move(value);
    ++size_;
  }
  void pop_front() {
    TINYTCP_DCHECK(size_ > 0);
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

  // Grows the ring to hold at least `n` elements (rounded up to a power of two).
  void reserve(size_t n) {
    if (n <= capacity()) {
      return;
    }
    size_t cap = 16;
    while (cap < n) {
      cap *= 2;
    }
    std::unique_ptr<T[]> fresh(new T[cap]);
    for (size_t i = 0; i < size_; ++i) {
      fresh[i] = std::move(data_[(head_ + i) & mask_]);
    }
    data_ = std::move(fresh);
    mask_ = cap - 1;
    head_ = 0;
  }

 private:
  std::unique_ptr<T[]> data_;
  size_t mask_ = 0;  // capacity - 1 once allocated
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace tinytcp

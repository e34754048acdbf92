#pragma once

// ByteStream: a bounded, in-memory, reliable byte stream. The writer side pushes
// bytes and eventually closes (or reports an error); the reader side peeks at
// and pops buffered bytes. It sits under the TCP receiver (whose Reassembler
// writes into it) and beside the sender (which reads what the app wrote).
//
// Storage is one buffer of `capacity` bytes allocated at construction, used as
// a ring that wraps after the first kInitialRing bytes and grows (doubling, up
// to the capacity) only when more bytes must be held at once: push and pop
// never allocate, pop and peek are O(1), push copies only the bytes it takes
// (and, when the ring grows while wrapped, moves the wrapped part once).
// Memory the ring never reaches is never touched, so a stream that holds little
// at a time costs a few pages and stays in cache, whatever its capacity.
// `peek()` is contiguous, so at the wrap point it returns the first part and
// the rest follows after a pop.
//
// Out-of-order writes: the Reassembler stores bytes that arrive ahead of the
// write end directly in the ring at their final position (`write_ahead`) and
// makes them readable with `commit`, so no byte is copied twice.
//
// Zero-copy writes: `write_region(max)` shows the free room past the write
// end (one span, or two at the wrap point) for the writer to fill in place
// (e.g. pread() a file straight into the send buffer), and `commit_region(n)`
// makes the first n bytes of it readable, as push() would have.
//
// A stream that empties while nothing waits ahead of the write end starts
// again at the front of the ring. A reader that keeps up then works in the
// first few hundred KiB of a multi-MiB ring, which stay cached and mapped,
// instead of walking (and page-faulting) through all of it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace tinytcp::stream {

// Free room of a ByteStream to write in place: `first`, then (at the wrap
// point) `second`; bytes fill `first` before `second`.
struct WriteRegion {
  char* first = nullptr;
  uint64_t first_size = 0;
  char* second = nullptr;
  uint64_t second_size = 0;
  uint64_t size() const { return first_size + second_size; }
};

class ByteStream {
 public:
  static constexpr uint64_t kInitialRing = 256 * 1024;

  // `initial_ring`: where the ring first wraps (tests use small ones).
  explicit ByteStream(uint64_t capacity, uint64_t initial_ring = kInitialRing);

  // Writer side.
  // Takes up to available_capacity() bytes of `data` and drops the rest;
  // returns the number taken. Pushing to a closed or errored stream takes nothing.
  uint64_t push(std::string_view data);
  void close();
  void set_error();
  uint64_t available_capacity() const { return capacity_ - size_; }
  uint64_t bytes_pushed() const { return bytes_pushed_; }
  bool is_closed() const { return closed_; }

  // Writes `data` at `offset` bytes past the write end without making it
  // readable. Requires offset + data.size() <= available_capacity().
  void write_ahead(uint64_t offset, std::string_view data);
  // Makes the next `n` bytes past the write end (already placed by
  // write_ahead) readable. Requires n <= available_capacity().
  void commit(uint64_t n);

  // Zero-copy writer side. The free room past the write end, up to `max`
  // bytes and available_capacity(): empty on a closed or errored stream, or
  // while bytes wait ahead of the write end (write_ahead). Grows the ring as
  // push() would, so it may move buffered bytes, never the ones peek() shows.
  // Valid until the next call that writes or pops.
  WriteRegion write_region(uint64_t max);
  // Makes the first `n` bytes of the last write_region() readable. Refused
  // (false, nothing changes) when n exceeds that region or a write or pop
  // came in between; commit_region(0) is a no-op that succeeds.
  bool commit_region(uint64_t n);

  // Reader side.
  // A contiguous view of the next buffered bytes: all of them, or at the wrap
  // point the part before it. Valid until the next pop(); writes (even ones
  // that grow the ring) never move the bytes it shows.
  std::string_view peek() const {
    const uint64_t first = ring_ - head_;
    return {buffer_.get() + head_, static_cast<size_t>(size_ < first ? size_ : first)};
  }
  // A contiguous view of the buffered bytes starting `offset` bytes after the
  // read position: up to the end of the buffered bytes or, at the wrap point,
  // the part before it. Empty when offset >= bytes_buffered(). Lets the TCP
  // sender hand out payload views of bytes it has sent but not yet popped.
  // Valid until the next pop() or write: growing the ring moves the part of
  // the bytes past its old wrap point.
  std::string_view peek_at(uint64_t offset) const {
    if (offset >= size_) {
      return {};
    }
    uint64_t at = head_ + offset;
    if (at >= ring_) {
      at -= ring_;
    }
    const uint64_t left = size_ - offset;
    const uint64_t first = ring_ - at;
    return {buffer_.get() + at, static_cast<size_t>(left < first ? left : first)};
  }
  // Removes up to `n` buffered bytes (fewer if fewer are buffered).
  void pop(uint64_t n) {
    region_ = 0;  // pop may restart the ring at the front
    if (n > size_) {
      n = size_;
    }
    head_ += n;
    if (head_ >= ring_) {
      head_ -= ring_;
    }
    size_ -= n;
    bytes_popped_ += n;
    if (size_ == 0 && ahead_ == 0) {
      head_ = 0;
    }
  }
  uint64_t bytes_buffered() const { return size_; }
  uint64_t bytes_popped() const { return bytes_popped_; }
  bool is_finished() const { return closed_ && size_ == 0; }
  bool has_error() const { return error_; }

  uint64_t capacity() const { return capacity_; }
  // Bytes of the buffer the ring uses now (grows toward capacity()).
  uint64_t ring_bytes() const { return ring_; }

 private:
  // Copies `data` into the ring starting `offset` bytes past the write end.
  void copy_in(uint64_t offset, std::string_view data);
  // Grows the ring to hold `used` bytes from the read position (<= capacity).
  void reserve(uint64_t used);

  uint64_t capacity_;
  std::unique_ptr<char[]> buffer_;
  uint64_t ring_;      // the ring wraps here; <= capacity_
  uint64_t head_ = 0;  // ring index of the first buffered byte
  uint64_t size_ = 0;  // bytes buffered
  // Bytes past the write end that write_ahead() may have filled: the ring may
  // start over at the front only when this is 0.
  uint64_t ahead_ = 0;
  uint64_t bytes_pushed_ = 0;
  uint64_t bytes_popped_ = 0;
  // Size of the last write_region(), until a write or pop: what
  // commit_region() may make readable.
  uint64_t region_ = 0;
  bool closed_ = false;
  bool error_ = false;
};

}  // namespace tinytcp::stream

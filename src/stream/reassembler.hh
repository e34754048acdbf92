#pragma once

// Reassembler: turns substrings of a byte stream, arriving in any order, with
// overlaps and duplicates, into the in-order ByteStream beneath it. The TCP
// receiver feeds it segment payloads by absolute stream index; it knows nothing
// of sequence numbers, SYN or FIN.
//
// Bytes are written straight into the stream's ring at their final position
// (ByteStream::write_ahead); an interval set records which ranges past the
// first unassembled byte are present, and a range becomes readable (commit) as
// soon as the gap before it fills. There is no map of pending string copies.
//
// The acceptable window is [first unassembled, first unread + capacity): bytes
// outside it are dropped. Overlaps are idempotent and, where copies conflict,
// the first copy of a byte wins. The end of the stream is learned from the
// first substring marked last, even out of order; the stream closes once every
// byte before it has been written.
//
// Cost per insert: O(log k) for k pending intervals plus the copy of new bytes.
// Memory: the interval set is bounded by the window (at most capacity / 2
// disjoint ranges); a node is allocated only when a new disjoint range forms.

#include <cstdint>
#include <map>
#include <string_view>

#include "stream/byte_stream.hh"

namespace tinytcp::stream {

class Reassembler {
 public:
  explicit Reassembler(ByteStream& output) : output_(output) {}

  // Inserts the bytes of `data`, which start at stream index `first_index`.
  void insert(uint64_t first_index, std::string_view data, bool is_last_substring);

  // Bytes held past the first unassembled byte, not yet readable.
  uint64_t bytes_pending() const { return pending_bytes_; }
  // Index of the next byte the stream is waiting for.
  uint64_t first_unassembled() const { return output_.bytes_pushed(); }
  // Number of disjoint pending ranges (for tests and SACK).
  size_t pending_ranges() const { return pending_.size(); }
  // The pending ranges [start, end), in stream order.
  const std::map<uint64_t, uint64_t>& pending() const { return pending_; }

  ByteStream& output() { return output_; }
  const ByteStream& output() const { return output_; }

 private:
  void store(uint64_t start, uint64_t stop, std::string_view data);

  ByteStream& output_;
  std::map<uint64_t, uint64_t> pending_;  // start -> end (exclusive), disjoint, not adjacent
  uint64_t pending_bytes_ = 0;
  uint64_t end_index_ = 0;
  bool end_known_ = false;
};

}  // namespace tinytcp::stream

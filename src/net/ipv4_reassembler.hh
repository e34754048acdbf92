#pragma once

// Ipv4Reassembler: puts fragmented datagrams back together (RFC 791 §3.2,
// with the hole bookkeeping of RFC 815 kept as a sorted list of received
// ranges). Memory is bounded three ways: at most `max_datagrams` in progress,
// at most `max_fragments` ranges per datagram, and at most `max_bytes`
// buffered in all; a datagram not complete `timeout` after its first fragment
// is dropped. As RFC 5722 requires for IPv6, a fragment that overlaps data
// already received drops the whole datagram (overlaps are how fragment
// attacks smuggle headers past filters); an exact duplicate is ignored. Every
// drop is counted.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/counters.hh"
#include "util/time.hh"
#include "wire/ipv4.hh"

namespace tinytcp::net {

enum class ReassemblyDrop {
  TooManyDatagrams,  // new datagram while max_datagrams are in progress
  OutOfMemory,       // the fragment would take the total past max_bytes
  TooManyFragments,  // more than max_fragments disjoint pieces
  TooBig,            // would end past 65535 bytes
  BadLength,         // a fragment other than the last is not a multiple of 8
  Overlap,           // overlaps received data (RFC 5722): whole datagram dropped
  Inconsistent,      // data past the end set by the last fragment, or two ends
  Duplicate,         // exact copy of a piece already held (ignored)
  Timeout,           // incomplete after `timeout`
  kCount
};
const char* to_string(ReassemblyDrop d);

class Ipv4Reassembler {
 public:
  struct Config {
    size_t max_datagrams = 64;
    size_t max_fragments = 64;
    size_t max_bytes = 1 << 20;
    Duration timeout = std::chrono::seconds(30);
  };

  explicit Ipv4Reassembler(const Config& config) : config_(config) {}

  // Takes a fragment (MF set or offset non-zero). Returns the whole datagram
  // once complete, in a buffer valid until the next call.
  std::optional<std::string_view> add(const wire::Ipv4View& fragment, std::string_view bytes,
                                      Instant now);
  // Drops datagrams older than the timeout.
  void tick(Instant now);
  std::optional<Instant> next_deadline() const;

  size_t datagrams_in_progress() const { return entries_.size(); }
  size_t bytes_buffered() const { return bytes_; }
  const EnumCounters<ReassemblyDrop>& drops() const { return drops_; }
  uint64_t reassembled() const { return reassembled_; }

 private:
  struct Key {
    uint32_t src;
    uint32_t dst;
    uint16_t id;
    uint8_t protocol;
    friend bool operator==(const Key& a, const Key& b) {
      return a.src == b.src && a.dst == b.dst && a.id == b.id && a.protocol == b.protocol;
    }
  };
  struct Entry {
    Key key;
    Instant started;
    std::string data;                                   // payload bytes by offset
    std::vector<std::pair<uint32_t, uint32_t>> ranges;  // [begin, end), sorted, disjoint
    std::optional<uint32_t> end;                        // payload length, from the last fragment
    std::string header;                                 // the first fragment's header
  };

  void erase(size_t i);
  void drop(ReassemblyDrop why);

  Config config_;
  std::vector<Entry> entries_;
  size_t bytes_ = 0;
  std::string out_;
  EnumCounters<ReassemblyDrop> drops_;
  uint64_t reassembled_ = 0;
};

}  // namespace tinytcp::net

#pragma once

// Ipv6Reassembler: puts fragmented IPv6 datagrams back together (RFC 8200
// §4.5). A fragment is keyed by source, destination and identification; the
// per-fragment headers of the result are those of the fragment at offset 0,
// with the Fragment header removed and the Next Header field before it set to
// the fragment's next header. The caller then walks the whole result again
// (parse_ipv6, parse_ipv6_chain).
//
// Rules beyond IPv4's:
// - RFC 5722 / RFC 8200 §4.5: a fragment overlapping data already held drops
//   the whole datagram, and fragments of it that arrive later are dropped too
//   until its timeout (the entry stays as a tombstone holding no data). Exact
//   duplicates are ignored, as §4.5 allows.
// - RFC 6946: an atomic fragment (offset 0, M clear) is a whole datagram and
//   is handed back at once, never mixed with fragments of the same id.
// - RFC 7112: a first fragment must hold the whole header chain and the
//   upper-layer header (TCP 20, UDP 8, ICMPv6 8 bytes); a tiny first fragment
//   drops the datagram (the caller sends Parameter Problem code 3).
// - §4.5: a non-last fragment whose length is not a multiple of 8, or one that
//   would make the payload length exceed 65535, is dropped (Parameter Problem
//   code 0 at the payload length or fragment offset field, sent by the caller:
//   the outcome says why each fragment was dropped).
// - §4.5: 60 s after the first fragment to arrive, an incomplete datagram is
//   dropped; if its offset-0 fragment had arrived, tick() hands it (as the
//   quote of a Time Exceeded code 1) to the caller.
//
// Memory is bounded as for IPv4: at most `max_datagrams` in progress (dead
// ones included), `max_fragments` pieces each, `max_bytes` held in all.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/counters.hh"
#include "util/time.hh"
#include "wire/ipv6.hh"
#include "wire/ipv6_chain.hh"

namespace tinytcp::net {

enum class Ipv6ReassemblyDrop {
  TooManyDatagrams,  // new datagram while max_datagrams are in progress
  OutOfMemory,       // the fragment would take the total past max_bytes
  TooManyFragments,  // more than max_fragments pieces
  TooBig,            // would make the payload length exceed 65535 (Parameter Problem 0)
  BadLength,         // a non-last fragment empty or not a multiple of 8 (Parameter Problem 0)
  IncompleteChain,   // RFC 7112: a first fragment without the whole header chain (code 3)
  Overlap,           // overlaps received data (RFC 5722): whole datagram dropped
  Abandoned,         // a fragment of a datagram already dropped for overlap
  Inconsistent,      // data past the end set by the last fragment, or two ends
  Duplicate,         // exact copy of a piece already held (ignored)
  Timeout,           // incomplete after `timeout` (counted per datagram)
  kCount
};
const char* to_string(Ipv6ReassemblyDrop d);

class Ipv6Reassembler {
 public:
  struct Config {
    size_t max_datagrams = 64;
    size_t max_fragments = 64;
    size_t max_bytes = 1 << 20;
    Duration timeout = std::chrono::seconds(60);  // RFC 8200 §4.5
  };

  struct Outcome {
    // A whole datagram (valid until the next call), when this completed one.
    std::optional<std::string_view> datagram;
    // Why this fragment was dropped (already counted), when it was.
    std::optional<Ipv6ReassemblyDrop> drop;
  };

  // Receives the quote for a Time Exceeded (code 1): the offset-0 fragment
  // of a datagram that timed out, cut to icmpv6::kMaxQuote bytes.
  using TimeoutSink = std::function<void(std::string_view first_fragment)>;

  explicit Ipv6Reassembler(const Config& config) : config_(config) {}

  // Takes a datagram whose chain walk stopped at a Fragment header
  // (chain.fragment set).
  Outcome add(const wire::Ipv6View& datagram, const wire::Ipv6Chain& chain, Instant now);
  // Drops datagrams older than the timeout.
  void tick(Instant now, const TimeoutSink& on_timeout = {});
  std::optional<Instant> next_deadline() const;

  size_t datagrams_in_progress() const { return entries_.size(); }
  size_t bytes_buffered() const { return bytes_; }
  const EnumCounters<Ipv6ReassemblyDrop>& drops() const { return drops_; }
  uint64_t reassembled() const { return reassembled_; }
  uint64_t atomic_fragments() const { return atomic_; }

 private:
  struct Key {
    wire::Ipv6Address src;
    wire::Ipv6Address dst;
    uint32_t id = 0;
    friend bool operator==(const Key& a, const Key& b) {
      return a.id == b.id && a.src == b.src && a.dst == b.dst;
    }
  };
  struct Entry {
    Key key;
    Instant started;
    bool dead = false;                                  // dropped for overlap: a tombstone
    std::string data;                                   // fragmentable part by offset
    std::vector<std::pair<uint32_t, uint32_t>> ranges;  // [begin, end), sorted, disjoint
    std::optional<uint32_t> end;                        // from the last fragment
    std::string head;              // offset-0 fragment up to its Fragment header (exclusive)
    size_t next_header_field = 0;  // in head: the field naming the Fragment header
  };

  Outcome drop(Ipv6ReassemblyDrop why);
  void erase(size_t i);
  void kill(size_t i);  // free the data, keep the key until the timeout
  Outcome atomic(const wire::Ipv6View& datagram, const wire::Ipv6Chain& chain);
  std::string_view assemble(Entry& e);

  Config config_;
  std::vector<Entry> entries_;
  size_t bytes_ = 0;
  std::string out_;
  EnumCounters<Ipv6ReassemblyDrop> drops_;
  uint64_t reassembled_ = 0;
  uint64_t atomic_ = 0;
};

}  // namespace tinytcp::net

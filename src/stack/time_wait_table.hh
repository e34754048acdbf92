#pragma once

// TimeWaitTable: the Host's connections in TIME-WAIT, each kept as a compact
// tcp::TimeWait by its 4-tuple instead of a whole connection (as Linux's
// timewait sockets), bounded by a capacity. The Host moves a connection
// here when it reaches TIME-WAIT with no application holding it, asks here
// for a segment that matches no connection, and expires entries on tick().
//
// What a TIME-WAIT connection answers is tcp::time_wait_receive's job; this
// class only stores, finds and expires.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "stack/four_tuple.hh"
#include "tcp/time_wait.hh"
#include "util/time.hh"

namespace tinytcp::stack {

class TimeWaitTable {
 public:
  explicit TimeWaitTable(size_t capacity) : capacity_(capacity) {}

  // Adds or replaces the entry of `tuple`; false when the table is full.
  bool insert(const FourTuple& tuple, const tcp::TimeWait& entry);
  tcp::TimeWait* find(const FourTuple& tuple);
  bool contains(const FourTuple& tuple) const { return entries_.count(tuple) > 0; }
  void erase(const FourTuple& tuple);

  // Removes the entries whose time is up (an entry's `expires` may have
  // been pushed later since it was inserted: it stays until then).
  void expire(Instant now);
  std::optional<Instant> next_deadline() const;

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  struct Slot {
    tcp::TimeWait entry;
    uint32_t generation = 0;
  };
  // One heap item per live entry, keyed by the deadline it was queued with;
  // an item whose generation no longer matches its tuple's is stale.
  struct Due {
    Instant at;
    FourTuple tuple;
    uint32_t generation = 0;
  };
  struct Later {
    bool operator()(const Due& a, const Due& b) const { return a.at > b.at; }
  };
  // Drops stale items from the top of the heap.
  void prune() const;

  size_t capacity_;
  uint32_t next_generation_ = 0;
  std::unordered_map<FourTuple, Slot, FourTupleHash> entries_;
  mutable std::priority_queue<Due, std::vector<Due>, Later> due_;
};

}  // namespace tinytcp::stack

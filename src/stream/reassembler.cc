#include "stream/reassembler.hh"

#include <algorithm>
#include <iterator>

namespace tinytcp::stream {

void Reassembler::insert(uint64_t first_index, std::string_view data, bool is_last_substring) {
  if (output_.has_error() || output_.is_closed()) {
    return;
  }
  if (is_last_substring && !end_known_) {
    end_known_ = true;
    end_index_ = first_index + data.size();
  }

  const uint64_t first_unassembled = output_.bytes_pushed();
  uint64_t limit = first_unassembled + output_.available_capacity();
  if (end_known_) {
    limit = std::min(limit, end_index_);
  }
  const uint64_t start = std::max(first_index, first_unassembled);
  const uint64_t stop = std::min(first_index + data.size(), limit);
  if (start < stop) {
    store(start, stop, data.substr(start - first_index, stop - start));
  }

  if (end_known_ && output_.bytes_pushed() >= end_index_) {
    output_.close();
  }
}

// Stores bytes [start, stop) (given in `data`), all inside the window.
void Reassembler::store(uint64_t start, uint64_t stop, std::string_view data) {
  const uint64_t first_unassembled = output_.bytes_pushed();

  // In order with nothing pending: a plain push.
  if (pending_.empty() && start == first_unassembled) {
    output_.push(data);
    return;
  }

  // The first range that overlaps or touches [start, stop).
  auto it = pending_.upper_bound(start);
  if (it != pending_.begin()) {
    const auto prev = std::prev(it);
    if (prev->second >= start) {
      it = prev;
    }
  }

  uint64_t merged_start = start;
  uint64_t merged_end = stop;
  uint64_t cursor = start;  // bytes before cursor are written or already present
  decltype(pending_)::node_type reuse;
  while (it != pending_.end() && it->first <= stop) {
    if (it->first > cursor) {
      output_.write_ahead(cursor - first_unassembled,
                          data.substr(cursor - start, it->first - cursor));
    }
    cursor = std::max(cursor, it->second);
    merged_start = std::min(merged_start, it->first);
    merged_end = std::max(merged_end, it->second);
    pending_bytes_ -= it->second - it->first;
    if (reuse.empty()) {
      const auto next = std::next(it);
      reuse = pending_.extract(it);
      it = next;
    } else {
      it = pending_.erase(it);
    }
  }
  if (cursor < stop) {
    output_.write_ahead(cursor - first_unassembled, data.substr(cursor - start));
  }

  if (merged_start == first_unassembled) {
    output_.commit(merged_end - merged_start);
    return;
  }
  pending_bytes_ += merged_end - merged_start;
  if (reuse.empty()) {
    pending_.emplace(merged_start, merged_end);
  } else {
    reuse.key() = merged_start;
    reuse.mapped() = merged_end;
    pending_.insert(std::move(reuse));
  }
}

}  // namespace tinytcp::stream

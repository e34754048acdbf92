#include "stack/time_wait_table.hh"

namespace tinytcp::stack {

bool TimeWaitTable::insert(const FourTuple& tuple, const tcp::TimeWait& entry) {
  auto it = entries_.find(tuple);
  if (it == entries_.end()) {
    if (entries_.size() >= capacity_) {
      return false;
    }
    it = entries_.emplace(tuple, Slot{}).first;
  }
  it->second.entry = entry;
  it->second.generation = ++next_generation_;
  due_.push(Due{entry.expires, tuple, it->second.generation});
  // Erased entries leave their items behind; with many of them (SYNs that
  // reuse tuples at once), drop them so the heap stays near the table's size.
  if (due_.size() > 2 * entries_.size() + 64) {
    std::vector<Due> live;
    live.reserve(entries_.size());
    while (!due_.empty()) {
      const Due d = due_.top();
      due_.pop();
      const auto e = entries_.find(d.tuple);
      if (e != entries_.end() && e->second.generation == d.generation) {
        live.push_back(d);
      }
    }
    due_ = decltype(due_)(Later{}, std::move(live));
  }
  return true;
}

tcp::TimeWait* TimeWaitTable::find(const FourTuple& tuple) {
  const auto it = entries_.find(tuple);
  return it == entries_.end() ? nullptr : &it->second.entry;
}

void TimeWaitTable::erase(const FourTuple& tuple) {
  entries_.erase(tuple);
}

void TimeWaitTable::prune() const {
  while (!due_.empty()) {
    const Due& d = due_.top();
    const auto it = entries_.find(d.tuple);
    if (it != entries_.end() && it->second.generation == d.generation) {
      return;
    }
    due_.pop();
  }
}

void TimeWaitTable::expire(Instant now) {
  for (prune(); !due_.empty() && due_.top().at <= now; prune()) {
    const Due d = due_.top();
    due_.pop();
    auto it = entries_.find(d.tuple);
    if (it->second.entry.expires <= now) {
      entries_.erase(it);
    } else {
      // A retransmitted FIN restarted its 2 MSL: queue it again.
      due_.push(Due{it->second.entry.expires, d.tuple, d.generation});
    }
  }
}

std::optional<Instant> TimeWaitTable::next_deadline() const {
  prune();
  if (due_.empty()) {
    return std::nullopt;
  }
  return due_.top().at;
}

}  // namespace tinytcp::stack

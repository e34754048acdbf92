#include "tcp/sack_scoreboard.hh"

#include <algorithm>

#include "util/check.hh"

namespace tinytcp::tcp {

void SackScoreboard::add(uint64_t start, uint32_t length, bool syn, bool fin, Instant now) {
  TINYTCP_DCHECK(queue_.empty() || queue_.back().end() == start);
  OutstandingSegment seg;
  seg.start = start;
  seg.length = length;
  seg.syn = syn;
  seg.fin = fin;
  seg.sent_at = now;
  seg.sent_order = ++transmissions_;
  queue_.push_back(seg);
  outstanding_ += length;
}

SackScoreboard::Acked SackScoreboard::acknowledge(uint64_t ack) {
  Acked acked;
  while (!queue_.empty() && queue_.front().start < ack) {
    OutstandingSegment& seg = queue_.front();
    const bool whole = seg.end() <= ack;
    const uint64_t n = whole ? seg.length : ack - seg.start;
    acked.bytes += n;
    acked.any_retransmitted |= seg.ever_retransmitted;
    if (seg.ever_retransmitted &&
        (!acked.newest_retransmission || seg.sent_at > *acked.newest_retransmission)) {
      acked.newest_retransmission = seg.sent_at;
    }
    if (!acked.oldest_sent || seg.sent_at < *acked.oldest_sent) {
      acked.oldest_sent = seg.sent_at;
    }
    acked.syn |= seg.syn;
    if (!seg.sacked) {
      note_delivered(seg);  // a sacked one was delivered when it was sacked
    }
    outstanding_ -= n;
    if (seg.sacked) {
      acked.sacked_bytes += n;
      sacked_bytes_ -= n;
      if (loss_index_ > 0) {
        below_sacked_bytes_ -= n;
      }
    } else {
      if (seg.lost) {
        lost_bytes_ -= n;
      }
      if (seg.rexmit) {
        rexmit_bytes_ -= n;
      }
    }
    if (!whole) {
      // A peer acknowledged part of a segment: keep the rest.
      seg.start = ack;
      seg.length = static_cast<uint32_t>(seg.length - n);
      seg.syn = false;
      // Cached blocks may have skipped this segment for starting before
      // them; now it starts later, so they must be walked again.
      cache_count_ = 0;
      break;
    }
    acked.fin |= seg.fin;
    ++acked.segments;
    if (seg.sacked) {
      --sacked_segments_;
      if (loss_index_ > 0) {
        --below_sacked_segments_;
      }
    } else {
      lost_segments_ -= seg.lost ? 1u : 0u;
      rexmit_segments_ -= seg.rexmit ? 1u : 0u;
    }
    queue_.pop_front();
    loss_index_ = loss_index_ > 0 ? loss_index_ - 1 : 0;
    rexmit_index_ = rexmit_index_ > 0 ? rexmit_index_ - 1 : 0;
  }
  if (queue_.empty()) {
    TINYTCP_DCHECK(outstanding_ == 0 && sacked_bytes_ == 0 && lost_bytes_ == 0);
    below_sacked_bytes_ = 0;
    below_sacked_segments_ = 0;
  }
  return acked;
}

size_t SackScoreboard::find(uint64_t seq) const {
  size_t lo = 0;
  size_t hi = queue_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (queue_[mid].end() <= seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void SackScoreboard::begin_sack() {
  next_cache_count_ = 0;
}

void SackScoreboard::end_sack() {
  cache_ = next_cache_;
  cache_count_ = next_cache_count_;
}

uint64_t SackScoreboard::sack(uint64_t left, uint64_t right) {
  if (left >= right) {
    return 0;
  }
  if (next_cache_count_ < kCacheSize) {
    next_cache_[next_cache_count_++] = Range{left, right};
  }
  // Skip the part already applied from the previous ACK's blocks: SACK blocks
  // repeat, usually growing at the right edge (RFC 2018 §4). A segment wholly
  // inside one cached block is sacked already; one that crosses its right
  // edge is found again by find(from). Only one block is used, so segments
  // across the junction of two overlapping blocks are never skipped.
  uint64_t from = left;
  for (size_t c = 0; c < cache_count_; ++c) {
    const Range& r = cache_[c];
    if (r.left <= left && r.right >= right) {
      return 0;
    }
    if (r.left <= left && r.right > from) {
      from = r.right;
    }
  }
  uint64_t newly = 0;
  for (size_t i = find(from); i < queue_.size() && queue_[i].start < right; ++i) {
    // A block that covers part of a segment (a receiver that took part of
    // it, a repacketizing middlebox) sacks that part: the segment is cut at
    // the block's edges (Linux's tcp_match_skb_to_sack). Never the SYN.
    if (!queue_[i].sacked && !queue_[i].syn) {
      if (queue_[i].start < left && queue_[i].end() > left) {
        split(i, static_cast<uint32_t>(left - queue_[i].start));
        ++partial_sacks_;
        continue;  // the piece at `left` is next
      }
      if (queue_[i].start >= left && queue_[i].end() > right) {
        split(i, static_cast<uint32_t>(right - queue_[i].start));
        ++partial_sacks_;
      }
    }
    OutstandingSegment& seg = queue_[i];
    if (seg.sacked || seg.start < left || seg.end() > right) {
      continue;
    }
    if (seg.lost) {
      lost_bytes_ -= seg.length;
      --lost_segments_;
    }
    if (seg.rexmit) {
      rexmit_bytes_ -= seg.length;
      --rexmit_segments_;
    }
    note_delivered(seg);
    seg.sacked = true;
    seg.lost = false;
    seg.rexmit = false;
    sacked_bytes_ += seg.length;
    ++sacked_segments_;
    if (i < loss_index_) {
      below_sacked_bytes_ += seg.length;
      ++below_sacked_segments_;
    }
    newly += seg.length;
  }
  return newly;
}

void SackScoreboard::mark_lost(size_t i) {
  OutstandingSegment& seg = queue_[i];
  if (seg.sacked || seg.lost) {
    return;
  }
  seg.lost = true;
  lost_bytes_ += seg.length;
  ++lost_segments_;
  rexmit_index_ = std::min(rexmit_index_, i);
}

uint64_t SackScoreboard::detect_losses() {
  uint64_t newly = 0;
  const uint64_t byte_threshold = uint64_t{kDupThresh - 1} * smss_;
  while (loss_index_ < queue_.size()) {
    const OutstandingSegment& seg = queue_[loss_index_];
    if (seg.sacked) {
      below_sacked_bytes_ += seg.length;
      ++below_sacked_segments_;
      ++loss_index_;
      continue;
    }
    const uint64_t above_segments = sacked_segments_ - below_sacked_segments_;
    const uint64_t above_bytes = sacked_bytes_ - below_sacked_bytes_;
    if (above_segments < kDupThresh && above_bytes <= byte_threshold) {
      break;  // IsLost is false here and for everything above it.
    }
    if (!seg.lost) {
      newly += seg.length;
    }
    mark_lost(loss_index_);
    ++loss_index_;
  }
  return newly;
}

bool SackScoreboard::mark_front_lost() {
  if (queue_.empty()) {
    return false;
  }
  const OutstandingSegment& seg = queue_.front();
  if (seg.sacked || seg.rexmit) {
    return false;
  }
  mark_lost(0);
  return true;
}

void SackScoreboard::forget_sacks() {
  for (size_t i = 0; i < queue_.size(); ++i) {
    queue_[i].sacked = false;
  }
  sacked_bytes_ = 0;
  sacked_segments_ = 0;
  below_sacked_bytes_ = 0;
  below_sacked_segments_ = 0;
  cache_count_ = 0;
  next_cache_count_ = 0;
}

void SackScoreboard::clear() {
  queue_.clear();
  outstanding_ = 0;
  lost_bytes_ = 0;
  rexmit_bytes_ = 0;
  lost_segments_ = 0;
  rexmit_segments_ = 0;
  loss_index_ = 0;
  rexmit_index_ = 0;
  forget_sacks();
}

void SackScoreboard::mark_all_lost() {
  lost_bytes_ = 0;
  rexmit_bytes_ = 0;
  lost_segments_ = 0;
  rexmit_segments_ = 0;
  for (size_t i = 0; i < queue_.size(); ++i) {
    OutstandingSegment& seg = queue_[i];
    seg.rexmit = false;
    seg.lost = !seg.sacked;
    if (seg.lost) {
      lost_bytes_ += seg.length;
      ++lost_segments_;
    }
  }
  loss_index_ = queue_.size();
  below_sacked_bytes_ = sacked_bytes_;
  below_sacked_segments_ = sacked_segments_;
  rexmit_index_ = 0;
}

std::optional<size_t> SackScoreboard::next_lost() {
  // No segment before the cursor is lost and not yet retransmitted (marking
  // one lost moves the cursor back to it). Lost segments are mostly a prefix
  // of the unsacked ones (IsLost is monotonic in the sequence number; fast
  // retransmit and timeouts mark from the front), but not always: a segment
  // the device refused is marked alone. has_lost() keeps the scan away when
  // nothing waits.
  if (!has_lost()) {
    return std::nullopt;
  }
  while (rexmit_index_ < queue_.size()) {
    const OutstandingSegment& seg = queue_[rexmit_index_];
    if (seg.lost && !seg.sacked && !seg.rexmit) {
      return rexmit_index_;
    }
    ++rexmit_index_;
  }
  return std::nullopt;
}

void SackScoreboard::on_retransmitted(size_t i, Instant now) {
  OutstandingSegment& seg = queue_[i];
  seg.ever_retransmitted = true;
  seg.sent_at = now;
  seg.sent_order = ++transmissions_;
  if (seg.lost && !seg.sacked && !seg.rexmit) {
    seg.rexmit = true;
    rexmit_bytes_ += seg.length;
    ++rexmit_segments_;
  }
}

void SackScoreboard::split(size_t i, uint32_t first_length) {
  TINYTCP_DCHECK(i < queue_.size() && !queue_[i].sacked);
  TINYTCP_DCHECK(first_length > 0 && first_length < queue_[i].length);
  OutstandingSegment second = queue_[i];
  second.start += first_length;
  second.length -= first_length;
  second.syn = false;
  queue_[i].length = first_length;
  queue_[i].fin = false;
  // Open a slot at i + 1: rare (the option room shrank while the segment
  // was out), so moving the entries after it is fine.
  queue_.push_back(queue_.back());
  for (size_t k = queue_.size() - 2; k > i + 1; --k) {
    queue_[k] = queue_[k - 1];
  }
  queue_[i + 1] = second;
  lost_segments_ += second.lost ? 1u : 0u;
  rexmit_segments_ += second.rexmit ? 1u : 0u;
  if (loss_index_ > i) {
    ++loss_index_;
  }
  if (rexmit_index_ > i + 1) {
    ++rexmit_index_;
  }
  cache_count_ = 0;  // cached blocks were walked over the old entries
}

bool SackScoreboard::mark_lost_by_time(size_t i) {
  OutstandingSegment& seg = queue_[i];
  if (seg.sacked || (seg.lost && !seg.rexmit)) {
    return false;
  }
  if (!seg.lost) {
    mark_lost(i);
    return true;
  }
  // A lost retransmission: lost again, not yet retransmitted again.
  seg.rexmit = false;
  rexmit_bytes_ -= seg.length;
  --rexmit_segments_;
  rexmit_index_ = std::min(rexmit_index_, i);
  return true;
}

void SackScoreboard::begin_delivery(Instant ambiguous_after) {
  delivery_ = Delivery{};
  ambiguous_after_ = ambiguous_after;
}

void SackScoreboard::note_delivered(const OutstandingSegment& seg) {
  // draft-cheng §3.3 IsNewestPacket (rate samples): the later transmission.
  if (!newest_delivered_ || seg.sent_order > newest_delivered_->sent_order) {
    newest_delivered_ = seg;
  }
  // RACK (RFC 8985 §6.2 steps 2-3).
  delivery_.highest_end = std::max(delivery_.highest_end, seg.end());
  if (!seg.ever_retransmitted) {
    delivery_.lowest_original_end = std::min(delivery_.lowest_original_end, seg.end());
  } else if (seg.sent_at > ambiguous_after_) {
    return;
  }
  // RFC 8985 §6.2 RACK_sent_after, by transmission order: the RFC's
  // tie-break for equal send times (the higher end) takes a retransmission
  // sent after new data in the same clock tick for the earlier one.
  if (!delivery_.newest_sent || seg.sent_order > delivery_.newest_order) {
    delivery_.newest_sent = seg.sent_at;
    delivery_.newest_end = seg.end();
    delivery_.newest_order = seg.sent_order;
  }
}

}  // namespace tinytcp::tcp

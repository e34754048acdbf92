#pragma once

// SackScoreboard: the sender's retransmission queue with the RFC 6675
// scoreboard over it. Every segment sent and not yet cumulatively acknowledged
// is one entry (sequence range, SYN/FIN, send time); the payload itself stays
// in the send ByteStream. On top of the queue it keeps what SACK blocks said
// (sacked), what loss detection concluded (lost: RFC 6675 IsLost, duplicate
// ACKs or a timeout) and what has been retransmitted since, and maintains the
// pipe estimate (RFC 6675 §4 SetPipe) incrementally.
//
// Cost: entries live in a ring (no allocation in steady state); a cumulative
// ACK pops from the front; a SACK block is found by binary search and only its
// new part is walked (blocks repeated from the previous ACK are skipped); the
// loss frontier and the retransmission cursor only move forward between
// timeouts. So each ACK costs O(log n) plus amortised O(1) per segment.
//
// It works without SACK too (nothing is ever sacked): the sender then marks
// losses from duplicate ACKs, partial ACKs and timeouts.

#include <array>
#include <cstdint>
#include <optional>

#include "util/ring_queue.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

struct OutstandingSegment {
  uint64_t start = 0;   // absolute sequence number of its first octet (SYN counts)
  uint32_t length = 0;  // sequence space: payload + SYN + FIN
  bool syn = false;
  bool fin = false;
  bool sacked = false;
  bool lost = false;                // presumed lost and not sacked
  bool rexmit = false;              // retransmitted since it was presumed lost
  bool ever_retransmitted = false;  // Karn's rule (RFC 6298 §3)
  Instant sent_at;                  // last transmission
  // Position of the last transmission in the order segments left the sender
  // (RACK_sent_after): several leave within one clock reading, and a
  // retransmission sent after new data has the lower sequence number.
  uint64_t sent_order = 0;
  // Delivery-rate stamps of the last transmission
  // (draft-cheng-iccrg-delivery-rate-estimation §3.2), set by the sender.
  uint64_t delivered = 0;    // the sender's delivered count then
  Instant delivered_time;    // when that count last grew
  Instant first_sent_time;   // send time of the first segment of its flight
  bool app_limited = false;  // sent while the application limited the rate

  uint64_t end() const { return start + length; }
};

class SackScoreboard {
 public:
  static constexpr uint32_t kDupThresh = 3;  // RFC 6675 §2 DupThresh

  // What a cumulative ACK removed.
  struct Acked {
    uint64_t bytes = 0;         // sequence space acknowledged (SYN and FIN included)
    uint64_t segments = 0;      // whole segments removed
    uint64_t sacked_bytes = 0;  // of `bytes`, already SACKed before
    bool any_retransmitted = false;
    // The last transmission of the most recently retransmitted removed segment.
    std::optional<Instant> newest_retransmission;
    std::optional<Instant> oldest_sent;  // earliest send time among removed segments
    bool syn = false;
    bool fin = false;
  };

  void set_smss(uint32_t smss) { smss_ = smss > 0 ? smss : 1; }

  // A first transmission at the end of the queue (start == end of the last).
  void add(uint64_t start, uint32_t length, bool syn, bool fin, Instant now);

  // Removes everything below `ack`, trimming a segment it splits.
  Acked acknowledge(uint64_t ack);

  // Marks the segments wholly inside SACK block [left, right) as sacked;
  // returns the bytes newly sacked. Call begin_sack()/end_sack() around the
  // blocks of one ACK so repeats of the previous ACK's blocks are skipped.
  void begin_sack();
  uint64_t sack(uint64_t left, uint64_t right);
  void end_sack();

  // RFC 6675 §4 IsLost: marks every unsacked segment with DupThresh sacked
  // segments, or more than (DupThresh - 1) * SMSS sacked bytes, above it.
  // Returns the bytes newly marked lost.
  uint64_t detect_losses();
  // Marks the first segment lost (fast retransmit without SACK, NewReno's
  // partial ACK). False when it is sacked or already retransmitted.
  bool mark_front_lost();
  // Retransmission timeout: every unsacked segment is lost, none retransmitted
  // (RFC 6675 §5.1).
  void mark_all_lost();
  // The receiver reneged (RFC 2018 §8): no segment counts as sacked any more.
  void forget_sacks();
  // Forgets every segment (they were never sent: a zero-window probe taken
  // back when the window opened).
  void clear();
  // SACK blocks that covered only part of a segment (cut to fit).
  uint64_t partial_sacks() const { return partial_sacks_; }

  // RFC 6675 §4 NextSeg rule (1): the first lost, unsacked segment not yet
  // retransmitted; its index in the queue.
  std::optional<size_t> next_lost();
  // Records a retransmission of entry `i`.
  void on_retransmitted(size_t i, Instant now);
  // Cuts entry `i` (not sacked) after `first_length` of its sequence space
  // into two entries with its state, so that a segment sent when it fitted
  // can be retransmitted in pieces that fit now (Linux's tcp_fragment). The
  // SYN stays with the first piece, the FIN with the second.
  void split(size_t i, uint32_t first_length);

  // RFC 8985 §6.2 step 5 (RACK): marks entry `i` lost by its send time. An
  // entry already retransmitted is a lost retransmission: it becomes a
  // NextSeg candidate again and leaves pipe. Returns false when it is sacked
  // or already lost and not yet retransmitted.
  bool mark_lost_by_time(size_t i);
  // The entry whose first octet is `seq`, if one is outstanding.
  std::optional<size_t> entry_starting_at(uint64_t seq) const {
    const size_t i = find(seq);
    return i < queue_.size() && queue_[i].start == seq ? std::optional<size_t>(i) : std::nullopt;
  }

  // What one ACK newly delivered (cumulatively or selectively), for RACK
  // (RFC 8985 §6.2 steps 2-3). Call begin_delivery() before the ACK's
  // acknowledge() and sack() calls.
  struct Delivery {
    // The most recently sent delivered segment whose RTT sample is not
    // ambiguous (RACK.xmit_ts, RACK.end_seq candidates).
    std::optional<Instant> newest_sent;
    uint64_t newest_end = 0;
    uint64_t newest_order = 0;
    // Lowest end among delivered segments never retransmitted (reordering
    // when below the highest end delivered before), highest end of all.
    uint64_t lowest_original_end = UINT64_MAX;
    uint64_t highest_end = 0;
  };
  // A retransmitted segment sent after `ambiguous_after` gives no sample
  // (RFC 8985 §6.2 step 2: it may be the original that was delivered).
  void begin_delivery(Instant ambiguous_after);
  const Delivery& delivery() const { return delivery_; }

  // The most recently sent segment that acknowledge() or sack() delivered
  // since the last call (draft-cheng §3.3 "the newest packet"), for the
  // sender's delivery-rate sample; then forgotten.
  std::optional<OutstandingSegment> take_newest_delivered() {
    auto newest = newest_delivered_;
    newest_delivered_.reset();
    return newest;
  }

  // RFC 6675 §4 SetPipe: octets outstanding, not sacked, not lost, plus
  // octets retransmitted since they were marked lost.
  uint64_t pipe() const { return outstanding_ - sacked_bytes_ - lost_bytes_ + rexmit_bytes_; }
  // The same count in segments, for windows counted in segments.
  uint64_t pipe_segments() const {
    return queue_.size() - sacked_segments_ - lost_segments_ + rexmit_segments_;
  }
  uint64_t outstanding_bytes() const { return outstanding_; }
  uint64_t sacked_bytes() const { return sacked_bytes_; }
  uint64_t lost_bytes() const { return lost_bytes_; }
  uint64_t retransmitted_bytes() const { return rexmit_bytes_; }
  uint64_t sacked_segments() const { return sacked_segments_; }
  bool has_lost() const { return lost_bytes_ > rexmit_bytes_; }

  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }
  const OutstandingSegment& operator[](size_t i) const { return queue_[i]; }
  OutstandingSegment& operator[](size_t i) { return queue_[i]; }
  const OutstandingSegment& front() const { return queue_.front(); }
  const OutstandingSegment& back() const { return queue_.back(); }

 private:
  // Index of the first segment whose end is past `seq` (size() if none).
  size_t find(uint64_t seq) const;
  void mark_lost(size_t i);
  void note_delivered(const OutstandingSegment& seg);

  RingQueue<OutstandingSegment> queue_{64};
  uint64_t transmissions_ = 0;  // sent_order of the last transmission
  uint32_t smss_ = 536;

  uint64_t outstanding_ = 0;
  uint64_t sacked_bytes_ = 0;
  uint64_t sacked_segments_ = 0;
  uint64_t lost_bytes_ = 0;    // lost and not sacked
  uint64_t rexmit_bytes_ = 0;  // lost, retransmitted, not sacked
  uint64_t lost_segments_ = 0;
  uint64_t rexmit_segments_ = 0;

  // Loss frontier: entries [0, loss_index_) have been judged by IsLost; the
  // sacked ones among them are counted here.
  size_t loss_index_ = 0;
  uint64_t below_sacked_bytes_ = 0;
  uint64_t below_sacked_segments_ = 0;
  // Entries [0, rexmit_index_) are not candidates for NextSeg rule (1).
  size_t rexmit_index_ = 0;

  // The blocks of the previous ACK, already applied.
  struct Range {
    uint64_t left = 0;
    uint64_t right = 0;
  };
  static constexpr size_t kCacheSize = 4;
  std::array<Range, kCacheSize> cache_{};
  size_t cache_count_ = 0;
  std::array<Range, kCacheSize> next_cache_{};
  size_t next_cache_count_ = 0;

  uint64_t partial_sacks_ = 0;
  Delivery delivery_;
  Instant ambiguous_after_;
  std::optional<OutstandingSegment> newest_delivered_;
};

}  // namespace tinytcp::tcp

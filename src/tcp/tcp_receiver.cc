#include "tcp/tcp_receiver.hh"

#include <algorithm>
#include <chrono>
#include <iterator>

#include <spdlog/spdlog.h>

#include "tcp/tcp_sender.hh"

namespace tinytcp::tcp {
namespace {

constexpr uint8_t kMaxWindowShift = 14;  // RFC 7323 §2.3
constexpr uint64_t kMaxWindowField = 0xffff;
// RFC 7323 §5.5: TS.Recent is invalid after 24 days of idleness.
constexpr Duration kTsRecentLifetime = std::chrono::hours(24 * 24);

// With a scaled window the field counts units of 2^shift bytes, and RCV.NXT
// moves by arbitrary amounts, so keeping the right edge where it was means
// rounding the window up, past the buffer by less than one unit per ACK
// (RFC 7323 §2.4 discusses this). The ring gets slack for that: while the
// application does not read, a whole window of delayed ACKs (one per two
// full-sized segments) may each round up by a unit. Only when the
// application stalls longer than that does the edge move back, by less than
// one unit. The slack is address space: the ring reaches into it only when
// it is used.
uint64_t ring_slack(const TcpConfig& config, uint8_t shift) {
  if (!config.window_scale || shift == 0) {
    return 0;
  }
  const uint64_t max_buffer = TcpReceiver::max_buffer_for(config);
  const uint64_t unit = uint64_t{1} << shift;
  const uint64_t acks = max_buffer / (2 * std::max<uint64_t>(config.mss, 1)) + 1;
  return std::max(max_buffer / 32, acks * unit) + unit;
}

}  // namespace

const char* to_string(ReceiverDrop drop) {
  switch (drop) {
    case ReceiverDrop::Paws:
      return "PAWS: old timestamp";
    case ReceiverDrop::OutOfWindow:
      return "outside the receive window";
    case ReceiverDrop::kCount:
      break;
  }
  return "unknown";
}

TcpReceiver::TcpReceiver(const TcpConfig& config, std::optional<uint32_t> ts_offset)
    : config_(config),
      ts_offset_(ts_offset),
      announced_shift_(window_shift_for(config)),
      tuner_(config.receive_buffer_bytes, max_buffer_for(config), config.mss),
      // The whole maximum is reserved, but the ring grows only as far as the
      // window fills it: pages past that are never touched.
      stream_(max_buffer_for(config) + ring_slack(config, announced_shift_)),
      reassembler_(stream_),
      rcv_mss_(std::min<uint64_t>(config.mss, 536)) {}

uint64_t TcpReceiver::max_buffer_for(const TcpConfig& config) {
  if (!config.autotune_receive_buffer) {
    return config.receive_buffer_bytes;
  }
  return std::max(config.receive_buffer_bytes, config.receive_buffer_max_bytes);
}

uint8_t TcpReceiver::window_shift_for(const TcpConfig& config) {
  if (!config.window_scale) {
    return 0;
  }
  // RFC 7323 §2.3: the shift is fixed by the SYN, so it must already cover
  // the largest window autotuning may advertise.
  const uint64_t max_buffer = max_buffer_for(config);
  uint8_t shift = 0;
  while (shift < kMaxWindowShift && (kMaxWindowField << shift) < max_buffer) {
    ++shift;
  }
  return shift;
}

std::optional<uint8_t> TcpReceiver::announced_window_shift() const {
  if (!config_.window_scale) {
    return std::nullopt;
  }
  return announced_shift_;
}

void TcpReceiver::on_syn(const TcpSegment& syn, Instant now) {
  irs_ = syn.seqno;
  last_ack_sent_ = 1;
  if (syn.options.timestamps) {
    ts_recent_ = syn.options.timestamps->value;
    ts_recent_valid_ = true;
    ts_recent_time_ = now;
  }
}

std::optional<Wrap32> TcpReceiver::ackno() const {
  if (!irs_) {
    return std::nullopt;
  }
  return Wrap32::wrap(rcv_nxt_abs(), *irs_);
}

uint64_t TcpReceiver::next_right_edge() const {
  const uint64_t n = first_unassembled();
  const uint64_t buffer = tuner_.buffer_bytes();
  const uint64_t real_edge = stream_.bytes_popped() + buffer;
  const uint64_t ring_edge = stream_.bytes_popped() + stream_.capacity();
  uint64_t target = real_edge;
  if (advertised_) {
    // RFC 1122 §4.2.3.3: open the window only by min(RCV.BUFF / 2, MSS) or
    // more; RFC 9293 §3.8.6.2.2: never move the right edge left.
    const uint64_t threshold = std::min<uint64_t>(buffer / 2, config_.mss);
    if (real_edge < advertised_edge_ + threshold) {
      target = advertised_edge_;
    }
    target = std::max(target, advertised_edge_);
  }
  target = std::max(target, n);
  const uint64_t unit = uint64_t{1} << shift();
  // RFC 7323 §2.3: the field is the window >> shift. Rounding up keeps the
  // edge where it was; the ring's slack holds the extra bytes.
  uint64_t field = std::min((target - n + unit - 1) / unit, kMaxWindowField);
  if (n + field * unit > ring_edge) {
    field = (ring_edge - n) / unit;
  }
  return n + field * unit;
}

uint64_t TcpReceiver::window_bytes() const {
  return next_right_edge() - first_unassembled();
}

bool TcpReceiver::in_window(Wrap32 seqno, uint64_t length) const {
  if (!irs_) {
    return false;
  }
  const int64_t wnd = advertised_
                          ? static_cast<int64_t>(std::max(advertised_edge_, first_unassembled()) -
                                                 first_unassembled())
                          : static_cast<int64_t>(window_bytes());
  const int64_t d = seqno - Wrap32::wrap(rcv_nxt_abs(), *irs_);
  // RFC 9293 §3.10.7.4, the four cases of the acceptability test.
  if (length == 0) {
    return wnd == 0 ? d == 0 : (d >= 0 && d < wnd);
  }
  if (wnd == 0) {
    return false;
  }
  const int64_t last = d + static_cast<int64_t>(length) - 1;
  return (d >= 0 && d < wnd) || (last >= 0 && last < wnd);
}

std::optional<ReceiverDrop> TcpReceiver::check(const TcpSegment& segment, Instant now) {
  if (!irs_) {
    return std::nullopt;
  }
  // RFC 7323 §5.3 R1: PAWS, before the sequence-number test.
  if (timestamps_ && ts_recent_valid_ && segment.options.timestamps && !segment.rst) {
    const auto age = static_cast<int32_t>(segment.options.timestamps->value - ts_recent_);
    if (age < 0) {
      if (now - ts_recent_time_ > kTsRecentLifetime) {
        ts_recent_valid_ = false;  // RFC 7323 §5.5: too old to compare with
      } else {
        stats_.drops.count(ReceiverDrop::Paws);
        SPDLOG_DEBUG("drop segment: {}", to_string(ReceiverDrop::Paws));
        note_refused_duplicate(segment);
        request_ack();
        return ReceiverDrop::Paws;
      }
    }
  }
  if (!in_window(segment.seqno, segment.sequence_length())) {
    stats_.drops.count(ReceiverDrop::OutOfWindow);
    SPDLOG_DEBUG("drop segment: {} (seq {} len {})", to_string(ReceiverDrop::OutOfWindow),
                 segment.seqno, segment.sequence_length());
    note_refused_duplicate(segment);
    request_ack();
    return ReceiverDrop::OutOfWindow;
  }
  return std::nullopt;
}

void TcpReceiver::receive(const TcpSegment& segment, Instant now) {
  if (!irs_) {
    return;
  }
  ++stats_.segments_received;
  stats_.bytes_received += segment.payload.size();

  uint64_t abs = unwrap(segment.seqno);
  // RFC 7323 §4.3: TS.Recent = SEG.TSval if SEG.TSval >= TS.Recent and
  // SEG.SEQ <= Last.ACK.sent.
  if (timestamps_ && segment.options.timestamps && abs <= last_ack_sent_) {
    const uint32_t tsval = segment.options.timestamps->value;
    if (!ts_recent_valid_ || static_cast<int32_t>(tsval - ts_recent_) >= 0) {
      ts_recent_ = tsval;
      ts_recent_valid_ = true;
      ts_recent_time_ = now;
    }
  }

  std::string_view payload = segment.payload;
  if (segment.syn) {
    ++abs;
  }
  if (abs == 0) {  // data claimed at the SYN's own sequence number: trim it
    payload.remove_prefix(std::min<size_t>(1, payload.size()));
    abs = 1;
  }
  if (payload.empty() && !segment.fin) {
    return;  // a pure ACK is not acknowledged
  }
  const uint64_t index = abs - 1;
  const uint64_t before = first_unassembled();
  note_received_duplicate(abs, payload.size(), segment.fin);
  const bool had_pending = reassembler_.pending_ranges() > 0;
  const bool was_closed = stream_.is_closed();
  reassembler_.insert(index, payload, segment.fin);
  const uint64_t after = first_unassembled();

  if (!payload.empty()) {
    rcv_mss_ = std::max<uint64_t>(rcv_mss_, std::min<uint64_t>(payload.size(), config_.mss));
    autotune(segment, now);
  }
  if (index > before) {
    // RFC 5681 §4.2: out-of-order data is acknowledged at once (a duplicate
    // ACK with SACK blocks, RFC 2018 §4).
    ++stats_.out_of_order_segments;
    note_sack(index);
    ack_now_ = true;
  } else if (index + payload.size() <= before && !(segment.fin && !was_closed)) {
    ++stats_.duplicate_segments;  // RFC 9293 §3.10.7.4: old data gets an ACK
    ack_now_ = true;
  } else if (had_pending && after > before) {
    ack_now_ = true;  // RFC 5681 §4.2: fills all or part of a gap
  }
  if (segment.fin) {
    ack_now_ = true;
  }
  if (!ack_now_) {
    // RFC 1122 §4.2.3.2 / RFC 5681 §4.2: ACK at least every second
    // full-sized segment and within 500 ms (we use delayed_ack_timeout).
    unacked_bytes_ += after - before;
    if (payload.size() >= rcv_mss_) {
      ++unacked_full_segments_;
    }
    if (!config_.delayed_ack || unacked_full_segments_ >= 2 || unacked_bytes_ >= 2 * rcv_mss_) {
      quota_ack_ = true;
    } else if (!ack_deadline_) {
      ack_deadline_ = now + config_.delayed_ack_timeout;
    }
  }
}

void TcpReceiver::autotune(const TcpSegment& segment, Instant now) {
  if (tuner_.buffer_bytes() >= tuner_.max_bytes()) {
    return;
  }
  if (timestamps_ && ts_offset_ && segment.options.timestamps) {
    tuner_.on_timestamp_echo(TcpSender::timestamp_clock(*ts_offset_, now),
                             segment.options.timestamps->echo_reply, segment.payload.size(),
                             rcv_mss_);
  }
  tuner_.on_data(first_unassembled(), advertised_edge_, now);
  const uint64_t before = tuner_.buffer_bytes();
  tuner_.on_consumed(stream_.bytes_popped(), now);
  if (tuner_.buffer_bytes() > before) {
    ++stats_.buffer_grows;
    SPDLOG_DEBUG("receive buffer {} -> {} bytes (rtt {} us)", before, tuner_.buffer_bytes(),
                 std::chrono::duration_cast<std::chrono::microseconds>(*tuner_.rtt()).count());
  }
}

void TcpReceiver::note_duplicate(uint64_t left, uint64_t right) {
  if (sack_ && left < right) {
    dsack_ = Duplicate{left, right};
  }
}

void TcpReceiver::note_refused_duplicate(const TcpSegment& segment) {
  // RFC 2883 §4 (and Linux's tcp_send_dupack): a refused segment whose
  // sequence space starts below RCV.NXT is a duplicate of what we have.
  if (segment.syn || segment.rst || segment.sequence_length() == 0) {
    return;
  }
  const uint64_t rcv_nxt = rcv_nxt_abs();
  const int64_t d = segment.seqno - Wrap32::wrap(rcv_nxt, *irs_);
  if (d >= 0 || static_cast<uint64_t>(-d) >= rcv_nxt) {
    return;  // not below RCV.NXT, or before the peer's SYN
  }
  const uint64_t left = rcv_nxt - static_cast<uint64_t>(-d);
  note_duplicate(left, std::min(left + segment.sequence_length(), rcv_nxt));
}

void TcpReceiver::note_received_duplicate(uint64_t abs, uint64_t length, bool fin) {
  // RFC 2883 §4: the part below RCV.NXT (a FIN already received included),
  // else the first part that overlaps a block held out of order. One block
  // per segment, as Linux's tcp_dsack_set.
  const uint64_t rcv_nxt = rcv_nxt_abs();
  if (abs < rcv_nxt) {
    note_duplicate(abs, std::min(abs + length + (fin ? 1 : 0), rcv_nxt));
    return;
  }
  const uint64_t index = abs - 1;
  const auto& pending = reassembler_.pending();
  auto it = pending.upper_bound(index);
  if (it != pending.begin() && std::prev(it)->second > index) {
    --it;
  }
  if (it != pending.end() && it->first < index + length) {
    note_duplicate(std::max(index, it->first) + 1, std::min(index + length, it->second) + 1);
  }
}

void TcpReceiver::note_sack(uint64_t start) {
  // Move (or add) to the front: RFC 2018 §4, the first block reports the
  // most recently received segment.
  size_t i = 0;
  while (i < recent_sack_count_ && recent_sack_[i] != start) {
    ++i;
  }
  if (i == recent_sack_count_) {
    if (recent_sack_count_ < recent_sack_.size()) {
      ++recent_sack_count_;
    }
    i = recent_sack_count_ - 1;
  }
  for (; i > 0; --i) {
    recent_sack_[i] = recent_sack_[i - 1];
  }
  recent_sack_[0] = start;
}

void TcpReceiver::build_sack(TcpOptions& options) const {
  options.sack_count = 0;
  // RFC 2018 §3: with timestamps only three blocks fit in 40 option bytes.
  const size_t limit = timestamps_ ? 3 : 4;
  size_t first_held = 0;  // the first block that reports data we hold
  if (dsack_) {
    // RFC 2883 §4: the first block reports the duplicate.
    options.sack[0] =
        SackBlock{Wrap32::wrap(dsack_->left, *irs_), Wrap32::wrap(dsack_->right, *irs_)};
    options.sack_count = 1;
    first_held = 1;
  }
  const auto& pending = reassembler_.pending();
  if (pending.empty()) {
    return;
  }
  auto add = [&](uint64_t left, uint64_t right) {
    for (size_t i = first_held; i < options.sack_count; ++i) {
      if (options.sack[i].left == Wrap32::wrap(left + 1, *irs_)) {
        return;
      }
    }
    if (options.sack_count < limit) {
      options.sack[options.sack_count++] =
          SackBlock{Wrap32::wrap(left + 1, *irs_), Wrap32::wrap(right + 1, *irs_)};
    }
  };
  // Adds the held range that contains stream index `index`, if any.
  auto add_containing = [&](uint64_t index) {
    auto it = pending.upper_bound(index);
    if (it == pending.begin()) {
      return;
    }
    --it;
    if (it->second > index) {
      add(it->first, it->second);
    }
  };
  // RFC 2883 §4: a duplicate of data held out of order is followed by the
  // (possibly larger) block that holds it.
  if (dsack_ && dsack_->left > rcv_nxt_abs()) {
    add_containing(dsack_->left - 1);
  }
  // The block holding the newest segment first, then the others most recently
  // reported (RFC 2018 §4), then any remaining ranges from the highest down.
  for (size_t i = 0; i < recent_sack_count_; ++i) {
    add_containing(recent_sack_[i]);
  }
  for (auto it = pending.rbegin(); it != pending.rend() && options.sack_count < limit; ++it) {
    add(it->first, it->second);
  }
}

size_t TcpReceiver::sack_option_bytes() const {
  if (!sack_ || !irs_ || (reassembler_.pending_ranges() == 0 && !dsack_)) {
    return 0;
  }
  TcpOptions options;
  build_sack(options);
  return tcp::sack_option_bytes(options.sack_count);
}

uint16_t TcpReceiver::window_field() const {
  return static_cast<uint16_t>((next_right_edge() - first_unassembled()) >> shift());
}

void TcpReceiver::fill(TcpSegment& segment) {
  const uint64_t n = first_unassembled();
  const uint64_t edge = next_right_edge();
  if (segment.syn) {
    // RFC 7323 §2.2: the window field of a SYN is never scaled.
    const uint64_t window = std::min(edge - n, kMaxWindowField);
    segment.window = static_cast<uint16_t>(window);
    advertised_edge_ = std::max(advertised_edge_, n + window);
  } else {
    segment.window = static_cast<uint16_t>((edge - n) >> shift());
    advertised_edge_ = edge;
  }
  advertised_ = true;
  advertised_on_syn_ = segment.syn;
  if (!irs_) {
    return;
  }
  segment.ack = true;
  segment.ackno = Wrap32::wrap(rcv_nxt_abs(), *irs_);
  last_ack_sent_ = rcv_nxt_abs();
  if (timestamps_ && segment.options.timestamps) {
    segment.options.timestamps->echo_reply = ts_recent_valid_ ? ts_recent_ : 0;
  }
  if (sack_ && !segment.syn) {
    build_sack(segment.options);
    if (dsack_) {
      ++stats_.dsack_blocks;  // RFC 2883 §4: reported once, in this segment
      dsack_.reset();
    }
  }
  ++stats_.acks_sent;
  ack_now_ = false;
  quota_ack_ = false;
  ack_deadline_.reset();
  unacked_bytes_ = 0;
  unacked_full_segments_ = 0;
}

bool TcpReceiver::window_update_due() const {
  if (!irs_ || !advertised_ || advertised_on_syn_ || stream_.is_closed()) {
    return false;
  }
  // The window has opened by min(MSS, RCV.BUFF / 2) (RFC 1122 §4.2.3.3) and
  // the peer holds at most half a buffer of window: tell it now rather than
  // wait for its zero-window probe.
  // Measured against what fill() would advertise now, so the largest window
  // the field can carry (65535 unscaled) is taken into account.
  const uint64_t buffer = tuner_.buffer_bytes();
  const uint64_t max_window = std::min(buffer, kMaxWindowField << shift());
  const uint64_t n = first_unassembled();
  const uint64_t threshold = std::min<uint64_t>(buffer / 2, config_.mss);
  const uint64_t remaining = advertised_edge_ > n ? advertised_edge_ - n : 0;
  return next_right_edge() >= advertised_edge_ + threshold && remaining <= max_window / 2;
}

bool TcpReceiver::ack_due(Instant now) const {
  return ack_now_ || quota_ack_ || (ack_deadline_ && now >= *ack_deadline_) || window_update_due();
}

std::optional<Instant> TcpReceiver::next_deadline() const {
  return ack_deadline_;
}

}  // namespace tinytcp::tcp

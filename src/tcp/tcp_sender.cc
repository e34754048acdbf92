#include "tcp/tcp_sender.hh"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <spdlog/spdlog.h>

#include "tcp/congestion/reno.hh"
#include "util/check.hh"

namespace tinytcp::tcp {

namespace {

// RFC 7323 §3.2: timestamps take 10 option bytes, 12 with the NOP padding
// every implementation sends; they reduce the payload of every segment.
constexpr uint32_t kTimestampOptionBytes = 12;
// Below this the peer's MSS is nonsense; raised to it (Linux uses 48).
constexpr uint16_t kMinPeerMss = 64;
// Path MTU: IPv4 and TCP headers without options; the least MTU believed
// (Linux's min_pmtu); the MSS steps of black-hole detection (RFC 4821 §7.2's
// base of 1024, then RFC 9293's default 536).
constexpr uint32_t kIpv4TcpHeaderBytes = 40;
constexpr uint32_t kMinPathMtu = 552;
constexpr uint32_t kBlackHoleMss = 1024;
constexpr uint32_t kFloorMss = 536;
// RFC 7323 §2.3.
constexpr uint8_t kMaxWindowShift = 14;
// RFC 6298 §5.7.

uint32_t effective_mss(uint16_t ours, uint16_t theirs, bool timestamps) {
  uint32_t mss = std::min(ours, theirs);
  if (timestamps && mss > kTimestampOptionBytes + 1) {
    mss -= kTimestampOptionBytes;
  }
  return std::max<uint32_t>(mss, 1);
}

// Time to send `bytes` (a segment or two: far below 2^34) at `rate` bytes
// per second, rounded up so that pacing is never faster than the rate.
Duration time_at_rate(uint64_t bytes, uint64_t rate) {
  const uint64_t r = std::max<uint64_t>(rate, 1);
  return Duration(static_cast<int64_t>((bytes * 1'000'000'000ull + r - 1) / r));
}

}  // namespace

std::string_view to_string(AckResult r) {
  switch (r) {
    case AckResult::NoAck:
      return "no ACK flag";
    case AckResult::Advanced:
      return "advanced";
    case AckResult::Duplicate:
      return "duplicate";
    case AckResult::Old:
      return "old";
    case AckResult::TooOld:
      return "too old (RFC 5961)";
    case AckResult::Unsent:
      return "acknowledges unsent data";
  }
  return "?";
}

std::string_view to_string(SenderInputError e) {
  switch (e) {
    case SenderInputError::SackBlockInverted:
      return "SACK block with left >= right";
    case SenderInputError::SackBlockOutOfWindow:
      return "SACK block outside [SND.UNA, SND.NXT]";
    case SenderInputError::SackNotNegotiated:
      return "SACK blocks without SACK negotiated";
    case SenderInputError::WindowShrunk:
      return "window shrunk";
    case SenderInputError::TimestampEchoInFuture:
      return "timestamp echo in the future";
    case SenderInputError::WindowScaleTooLarge:
      return "window scale above 14";
    case SenderInputError::PeerMssTooSmall:
      return "peer MSS too small";
    case SenderInputError::kCount:
      break;
  }
  return "?";
}

std::string_view to_string(SenderFailure f) {
  switch (f) {
    case SenderFailure::MaxRetransmissions:
      return "too many retransmissions";
    case SenderFailure::UserTimeout:
      return "user timeout";
    case SenderFailure::KeepaliveTimeout:
      return "keepalive timeout";
  }
  return "?";
}

TcpSender::TcpSender(const TcpConfig& config, Wrap32 isn, std::optional<uint32_t> ts_offset)
    : config_(config),
      isn_(isn),
      outbound_(config.send_buffer_bytes),
      rtt_(config.rto_initial, config.rto_min, config.rto_max),
      smss_(effective_mss(config.mss, config.default_peer_mss, false)),
      // RFC 7323 §7.1: an offset the peer cannot relate to our uptime or
      // ISN (the Host keys one per address pair); without one, the ISN
      // keeps in-memory tests deterministic.
      ts_offset_(ts_offset.value_or(isn.raw())) {
  peer_.mss = config.default_peer_mss;
  const CongestionParams params{smss_, config.initial_window_segments};
  auto cc = make_congestion_control(config.congestion_control, params);
  if (cc) {
    cc_ = std::move(cc).value();
  } else {
    cc_error_ = cc.error();
    spdlog::warn("{}; using reno", cc.error());
    cc_ = std::make_unique<Reno>(params);
  }
  rate_sampling_ = cc_->wants_rate_samples();
  board_.set_smss(smss_);
  scratch_.reserve(smss_);
  traced_ = state();
}

TcpSender::~TcpSender() = default;
TcpSender::TcpSender(TcpSender&&) noexcept = default;
TcpSender& TcpSender::operator=(TcpSender&&) noexcept = default;

void TcpSender::set_congestion_control(std::unique_ptr<CongestionControl> cc) {
  TINYTCP_DCHECK(cc != nullptr && snd_nxt_ <= 1);
  cc_ = std::move(cc);
  cc_->set_mss(smss_);
  rate_sampling_ = cc_->wants_rate_samples();
  cc_error_.reset();
  traced_ = state();
}

stream::ByteStream& TcpSender::outbound() {
  return outbound_;
}
const stream::ByteStream& TcpSender::outbound() const {
  return outbound_;
}

void TcpSender::set_peer_options(const PeerOptions& options) {
  peer_ = options;
  if (peer_.send_window_shift > kMaxWindowShift) {
    stats_.input_errors.count(SenderInputError::WindowScaleTooLarge);
    SPDLOG_DEBUG("peer window shift {} clamped to 14", peer_.send_window_shift);
    peer_.send_window_shift = kMaxWindowShift;
  }
  if (peer_.mss < kMinPeerMss) {
    stats_.input_errors.count(SenderInputError::PeerMssTooSmall);
    SPDLOG_DEBUG("peer MSS {} raised to {}", peer_.mss, kMinPeerMss);
    peer_.mss = kMinPeerMss;
  }
  if (!config_.sack) {
    peer_.sack = false;  // the switch that compares SACK and cumulative-ACK recovery
  }
  if (!config_.timestamps) {
    peer_.timestamps = false;
  }
  update_smss();
}

void TcpSender::update_smss() {
  const auto ours =
      static_cast<uint16_t>(std::min<uint32_t>(config_.mss, path_mss_.value_or(0xffff)));
  smss_ = effective_mss(ours, peer_.mss, peer_.timestamps);
  cc_->set_mss(smss_);
  board_.set_smss(smss_);
  scratch_.reserve(smss_);
}

bool TcpSender::in_flight(Wrap32 seqno) const {
  const uint64_t seq = seqno.unwrap(isn_, snd_una_);
  return seq >= snd_una_ && seq < snd_nxt_;
}

bool TcpSender::lower_path_mss(uint32_t mss) {
  if (mss >= segment_room()) {
    return false;  // RFC 1191 §3: only ever lowered here
  }
  path_mss_ = mss;
  update_smss();
  // Linux's tcp_simple_retransmit: what was sent too big is lost; it goes
  // again, cut to the new size, and that is no congestion signal.
  const uint32_t fits = new_segment_payload();
  for (size_t i = 0; i < board_.size(); ++i) {
    const OutstandingSegment& seg = board_[i];
    if (seg.length - (seg.syn ? 1u : 0u) - (seg.fin ? 1u : 0u) > fits) {
      board_.mark_lost_by_time(i);
    }
  }
  return true;
}

bool TcpSender::on_path_mtu(uint32_t mtu) {
  // RFC 1191 §3 allows down to 68; Linux stops at min_pmtu 552: an ICMP
  // claiming less is more likely an attack than a path.
  const uint32_t mss = std::max(mtu, kMinPathMtu) - kIpv4TcpHeaderBytes;
  if (!lower_path_mss(mss)) {
    return false;
  }
  ++stats_.path_mtu_updates;
  return true;
}

uint32_t TcpSender::timestamp_clock(uint32_t offset, Instant now) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.since_epoch());
  return offset + static_cast<uint32_t>(ms.count());
}

uint32_t TcpSender::new_segment_payload() const {
  // RFC 9293 §3.7.1 / RFC 6691: the options of a segment come out of the
  // MSS. Timestamps are in smss_ already; the SACK blocks the receiver
  // holds vary, so they are taken off each new segment (Linux's
  // tcp_current_mss does the same).
  return smss_ > sack_option_bytes_ + 1 ? smss_ - sack_option_bytes_ : 1;
}

uint64_t TcpSender::bytes_in_flight() const {
  const uint64_t pipe = board_.pipe();
  return pipe - std::min(pipe, reno_dup_bytes_);
}

bool TcpSender::segment_window_full() const {
  const auto limit = cc_->max_segments_in_flight();
  if (!limit) {
    return false;
  }
  const uint64_t segments = board_.pipe_segments();
  return segments - std::min(segments, reno_dup_bytes_ / smss_) >= *limit;
}

uint64_t TcpSender::pending_bytes() const {
  // Data occupies sequence numbers [1, 1 + bytes_pushed).
  const uint64_t sent_data = snd_nxt_ > 0 ? snd_nxt_ - 1 : 0;
  const uint64_t pushed = outbound_.bytes_pushed();
  return pushed > sent_data ? pushed - sent_data : 0;
}

// ---------------------------------------------------------------------------
// Sending

void TcpSender::transmit_range(uint64_t start, uint32_t length, bool syn, bool fin, Instant now,
                               const Transmit& transmit) {
  TcpSegment seg;
  seg.seqno = Wrap32::wrap(start, isn_);
  seg.syn = syn;
  seg.fin = fin;
  const uint32_t payload = length - (syn ? 1u : 0u) - (fin ? 1u : 0u);
  if (payload > 0) {
    // Sequence number s > 0 holds stream byte s - 1; bytes below SND.UNA are
    // already popped from the stream.
    const uint64_t first = start + (syn ? 1 : 0) - 1;
    const uint64_t offset = first - outbound_.bytes_popped();
    const std::string_view view = outbound_.peek_at(offset);
    if (view.size() >= payload) {
      seg.payload = view.substr(0, payload);
    } else {
      // The segment crosses the ring's wrap point: one copy into scratch.
      scratch_.assign(view);
      const std::string_view rest = outbound_.peek_at(offset + view.size());
      scratch_.append(rest.substr(0, payload - view.size()));
      seg.payload = scratch_;
    }
    seg.psh = first + payload == outbound_.bytes_pushed();
  }
  if (syn) {
    // What we offer; TcpConnection adds the window scale (a receive-side choice).
    OptionNegotiation::offer(seg.options, config_, timestamp_value(now));
  } else if (peer_.timestamps) {
    seg.options.timestamps = Timestamps{timestamp_value(now), 0};
  }
  ++stats_.segments_sent;
  stats_.bytes_sent += payload;
  transmit(seg);
  last_sent_ = now;
  cc_->on_packet_sent(now, length, bytes_in_flight());
}

void TcpSender::arm_rto(Instant now) {
  if (!rto_deadline_ && !persist_deadline_) {
    Duration timeout = rtt_.rto();  // RFC 6298 §5.1
    if (!syn_acked() && config_.syn_rto > Duration::zero()) {
      // The SYN's own timer (TcpConfig::syn_rto): syn_rto * 2^n, capped by the RTO.
      const uint32_t doublings = std::min<uint32_t>(consecutive_retransmissions_, 20);
      timeout = std::min(config_.syn_rto * (int64_t{1} << doublings), timeout);
    }
    rto_deadline_ = now + timeout;
  }
}

void TcpSender::send_syn(Instant now, const Transmit& transmit) {
  syn_sent_ = true;
  board_.add(0, 1, true, false, now);
  stamp_rate(board_[board_.size() - 1], true, now);
  snd_nxt_ = 1;
  unacked_since_ = now;
  transmit_range(0, 1, true, false, now, transmit);
  arm_rto(now);
}

void TcpSender::restore_syn(Instant now) {
  syn_sent_ = true;
  board_.add(0, 1, true, false, now);
  board_.on_retransmitted(0, now);
  stamp_rate(board_[0], true, now);
  snd_nxt_ = 1;
  unacked_since_ = now;
  arm_rto(now);
}

void TcpSender::retransmit(size_t index, Instant now, const Transmit& transmit) {
  // Sent when it fitted; since then the receiver may hold more SACK blocks
  // than the segment leaves room for: retransmit the part that fits now.
  const OutstandingSegment& whole = board_[index];
  const uint32_t payload = whole.length - (whole.syn ? 1u : 0u) - (whole.fin ? 1u : 0u);
  if (!whole.syn && payload > new_segment_payload()) {
    board_.split(index, new_segment_payload());
    ++stats_.retransmissions_split;
  }
  const OutstandingSegment seg = board_[index];
  const bool pipe_was_empty = bytes_in_flight() == 0;
  board_.on_retransmitted(index, now);
  stamp_rate(board_[index], pipe_was_empty, now);
  pacing_on_sent(seg.length, now);
  ++stats_.retransmitted_segments;
  stats_.retransmitted_bytes += seg.length - (seg.syn ? 1u : 0u) - (seg.fin ? 1u : 0u);
  if (in_recovery_ && peer_.sack) {
    ++stats_.sack_recovered_segments;
  }
  transmit_range(seg.start, seg.length, seg.syn, seg.fin, now, transmit);
  arm_rto(now);
}

bool TcpSender::send_retransmissions(Instant now, const Transmit& transmit) {
  // RFC 6675 §5 (C): while cwnd - pipe >= 1 SMSS, NextSeg rule (1) first. The
  // same rule repairs cumulative-ACK recovery and the go-back after a timeout.
  while (const auto index = board_.next_lost()) {
    const OutstandingSegment& seg = board_[*index];
    if (!retransmit_now_ &&
        (bytes_in_flight() + seg.length > cc_->cwnd() || segment_window_full())) {
      cwnd_limited_ = true;
      return false;  // lost data first: no new data either
    }
    retransmit_now_ = false;
    retransmit(*index, now, transmit);
  }
  retransmit_now_ = false;
  return true;
}

void TcpSender::send_new_data(Instant now, const Transmit& transmit) {
  pacing_release_.reset();
  while (!fin_sent_) {
    const uint64_t pending = pending_bytes();
    const bool closed = outbound_.is_closed();
    if (pending == 0 && !closed) {
      return;
    }
    const uint64_t right_edge = snd_una_ + wnd_;
    const uint64_t usable_wnd = right_edge > snd_nxt_ ? right_edge - snd_nxt_ : 0;
    const uint64_t flight = bytes_in_flight();
    const uint64_t cwnd = cc_->cwnd();
    const uint64_t usable_cwnd = cwnd > flight ? cwnd - flight : 0;
    const bool outstanding = snd_nxt_ > snd_una_;
    if (segment_window_full()) {
      cwnd_limited_ = true;
      return;
    }

    if (pending == 0) {
      // FIN alone: one sequence number, inside both windows.
      if (usable_wnd == 0 || usable_cwnd == 0) {
        return;
      }
      const bool pipe_was_empty = flight == 0;
      board_.add(snd_nxt_, 1, false, true, now);
      stamp_rate(board_[board_.size() - 1], pipe_was_empty, now);
      transmit_range(snd_nxt_, 1, false, true, now, transmit);
      if (!outstanding) {
        unacked_since_ = now;
      }
      snd_nxt_ += 1;
      fin_sent_ = true;
      arm_rto(now);
      return;
    }

    const uint64_t full = new_segment_payload();
    const uint64_t len = std::min<uint64_t>({pending, full, usable_wnd});
    if (len == 0) {
      return;  // zero window (persist timer) or window full
    }
    if (len > usable_cwnd) {
      cwnd_limited_ = true;
      return;
    }
    if (len < full) {
      if (len < pending) {
        // RFC 9293 §3.8.6.2.1 sender SWS avoidance: a window-limited small
        // segment only when nothing is outstanding or it is half the largest
        // window the peer has offered.
        if (outstanding && len < max_wnd_ / 2) {
          return;
        }
      } else if (config_.nagle && outstanding && !closed) {
        // RFC 896 / RFC 1122 §4.2.3.4: no small segment while data is
        // unacknowledged. Closing pushes the tail with its FIN.
        return;
      }
    }
    const bool fin = closed && len == pending && len + 1 <= usable_wnd && len + 1 <= usable_cwnd;
    const uint32_t length = static_cast<uint32_t>(len) + (fin ? 1u : 0u);
    if (!pacing_allows(length, now)) {
      return;
    }
    if (!outstanding && last_sent_) {
      // RFC 5681 §4.1, RFC 9438 §5.8: sending restarts after an idle period.
      cc_->on_transmit_start(
          TransmitStartEvent{now, now - *last_sent_, rtt_.rto(), config_.slow_start_after_idle});
    }
    board_.add(snd_nxt_, length, false, fin, now);
    stamp_rate(board_[board_.size() - 1], flight == 0, now);
    pacing_on_sent(length, now);
    transmit_range(snd_nxt_, length, false, fin, now, transmit);
    if (!outstanding) {
      unacked_since_ = now;
    }
    if (!in_recovery_ && reno_dup_bytes_ > 0) {
      limited_transmit_bytes_ += length;
    }
    snd_nxt_ += length;
    fin_sent_ = fin;
    arm_rto(now);
  }
}

void TcpSender::maybe_arm_persist(Instant now) {
  // RFC 9293 §3.8.6.1: a zero window with something to send and nothing in
  // flight is probed on a timer, or the window update could be lost forever.
  const bool want_to_send = pending_bytes() > 0 || (outbound_.is_closed() && !fin_sent_);
  if (wnd_ == 0 && snd_nxt_ == snd_una_ && want_to_send && !persist_deadline_) {
    persist_interval_ = rtt_.rto();
    persist_deadline_ = now + persist_interval_;
  }
}

void TcpSender::push(Instant now, const Transmit& transmit) {
  if (failure_) {
    return;
  }
  if (!syn_sent_) {
    send_syn(now, transmit);
    maybe_trace(now);
    return;
  }
  if (!syn_acked()) {
    return;
  }
  const uint64_t prior_nxt = snd_nxt_;
  if (wnd_ > 0 && send_retransmissions(now, transmit)) {
    send_new_data(now, transmit);
  }
  if (snd_nxt_ != prior_nxt) {
    schedule_tlp(now);  // RFC 8985 §7.2: restarted by new data
  }
  if (!recovery_probe_deadline_) {
    schedule_recovery_probe(now);
  }
  check_app_limited();
  maybe_arm_persist(now);
  maybe_trace(now);
}

TcpSegment TcpSender::make_empty_segment() const {
  TcpSegment seg;
  seg.seqno = Wrap32::wrap(snd_nxt_, isn_);
  return seg;
}

TcpSegment TcpSender::make_empty_segment(Instant now) const {
  TcpSegment seg = make_empty_segment();
  if (peer_.timestamps) {
    seg.options.timestamps = Timestamps{timestamp_value(now), 0};
  }
  return seg;
}

// ---------------------------------------------------------------------------
// Receiving acknowledgments

void TcpSender::process_sack(const TcpSegment& segment, uint64_t ack, uint64_t& newly_sacked) {
  const size_t count = std::min<size_t>(segment.options.sack_count, TcpOptions::kMaxSackBlocks);
  if (count == 0) {
    return;
  }
  if (!peer_.sack) {
    stats_.input_errors.count(SenderInputError::SackNotNegotiated);
    SPDLOG_DEBUG("ignore SACK blocks: SACK not negotiated");
    return;
  }
  board_.begin_sack();
  for (size_t i = 0; i < count; ++i) {
    const SackBlock& block = segment.options.sack[i];
    const uint64_t left = block.left.unwrap(isn_, snd_una_);
    const uint64_t right = block.right.unwrap(isn_, snd_una_);
    if (left >= right) {
      stats_.input_errors.count(SenderInputError::SackBlockInverted);
      SPDLOG_DEBUG("ignore SACK block [{}, {}): inverted", block.left, block.right);
      continue;
    }
    if (i == 0 && (right <= ack || inside_second_block(segment, count, block))) {
      // RFC 2883 §4: a first block below the cumulative ACK, or inside the
      // second block, reports a duplicate, not new data.
      ++stats_.dsack_blocks;
      continue;
    }
    // Checked against SND.UNA before this ACK (as Linux's
    // tcp_is_sackblock_valid): a block the new cumulative ACK cuts into
    // still tells what arrived above it.
    if (left < snd_una_ || right > snd_nxt_) {
      stats_.input_errors.count(SenderInputError::SackBlockOutOfWindow);
      SPDLOG_DEBUG("ignore SACK block [{}, {}): outside [SND.UNA, SND.NXT]", block.left,
                   block.right);
      continue;
    }
    if (right > ack) {
      newly_sacked += board_.sack(std::max(left, ack), right);
    }
  }
  board_.end_sack();
}

bool TcpSender::inside_second_block(const TcpSegment& segment, size_t count,
                                    const SackBlock& first) {
  if (count < 2) {
    return false;
  }
  const SackBlock& second = segment.options.sack[1];
  return seq_le(second.left, first.left) && seq_le(first.right, second.right) &&
         seq_lt(second.left, second.right);
}

void TcpSender::enter_recovery(Instant now) {
  // RFC 6582 §3.2 step 2 / RFC 6675 §5 step 4: remember the recovery point,
  // reduce the window once, retransmit the first unacknowledged segment now.
  in_recovery_ = true;
  recover_ = snd_nxt_;
  ++stats_.fast_retransmits;
  if (!peer_.sack) {
    reno_dup_bytes_ = std::min<uint64_t>(uint64_t{dupacks_} * smss_, board_.outstanding_bytes());
  }
  // RFC 5681 §3.2 step 2: segments sent by limited transmit are not part of
  // the FlightSize that sets ssthresh.
  const uint64_t flight = snd_nxt_ - snd_una_;
  cc_->on_congestion_event(
      LossEvent{now, flight - std::min(flight, limited_transmit_bytes_), bytes_in_flight()});
  limited_transmit_bytes_ = 0;
  board_.mark_front_lost();
  retransmit_now_ = true;
  end_tlp_episode();  // the recovery's reduction answers for the probe's loss too
}

void TcpSender::restart_timers_after_ack(Instant now) {
  if (board_.empty()) {
    rto_deadline_.reset();  // RFC 6298 §5.2
    unacked_since_.reset();
    return;
  }
  unacked_since_ = now;
  if (wnd_ == 0) {
    // Outstanding data beyond a zero window is repaired by probing.
    rto_deadline_.reset();
    if (!persist_deadline_) {
      persist_interval_ = rtt_.rto();
      persist_deadline_ = now + persist_interval_;
    }
    return;
  }
  rto_deadline_ = now + rtt_.rto();  // RFC 6298 §5.3
}

AckResult TcpSender::receive(const TcpSegment& segment, Instant now) {
  last_heard_ = now;
  keepalive_probes_out_ = 0;
  auto classify = [this](AckResult r) {
    ++stats_.acks[static_cast<size_t>(r)];
    return r;
  };
  if (!segment.ack) {
    return classify(AckResult::NoAck);
  }
  const uint64_t ack = segment.ackno.unwrap(isn_, snd_una_);
  if (!syn_sent_ || ack > snd_nxt_) {
    SPDLOG_DEBUG("ACK {} beyond SND.NXT", segment.ackno);
    return classify(AckResult::Unsent);
  }
  if (ack < snd_una_) {
    // RFC 5961 §5.2: acceptable down to SND.UNA - MAX.SND.WND.
    if (snd_una_ - ack <= max_wnd_) {
      return classify(AckResult::Old);
    }
    SPDLOG_DEBUG("ACK {} too old (RFC 5961)", segment.ackno);
    return classify(AckResult::TooOld);
  }
  const AckResult result = ack > snd_una_ ? AckResult::Advanced : AckResult::Duplicate;
  if (!orphaned_) {
    persist_probes_out_ = 0;  // the peer answers
  }
  const uint64_t prior_flight = bytes_in_flight();
  const uint64_t prior_wnd = wnd_;
  const uint64_t prior_cwnd = cc_->cwnd();

  // RFC 9293 §3.10.7.4: window update from the newest segment only.
  const uint64_t window = uint64_t{segment.window}
                          << (segment.syn ? 0 : peer_.send_window_shift);  // RFC 7323 §2.2
  if (!wnd_set_ || seq_lt(wl1_, segment.seqno) ||
      (wl1_ == segment.seqno && seq_le(wl2_, segment.ackno))) {
    if (wnd_set_ && ack + window < snd_una_ + wnd_) {
      stats_.input_errors.count(SenderInputError::WindowShrunk);
      SPDLOG_DEBUG("peer shrank its window");
    }
    wnd_ = window;
    wnd_set_ = true;
    wl1_ = segment.seqno;
    wl2_ = segment.ackno;
    max_wnd_ = std::max(max_wnd_, wnd_);
    if (wnd_ > 0) {
      persist_probes_out_ = 0;  // an orphan's count ends when the window opens
    }
    if (wnd_ > 0 && persist_deadline_) {
      persist_deadline_.reset();
      if (!board_.empty()) {
        rto_deadline_ = now + rtt_.rto();
      }
    }
  }
  if (prior_wnd == 0 && wnd_ > 0 && ack == snd_una_ && segment.options.sack_count == 0) {
    take_back_probe();
  }

  uint64_t newly_sacked = 0;
  board_.begin_delivery(rack_on() ? rack_ambiguous_after(segment, now) : now);
  const uint64_t prior_dsack_blocks = stats_.dsack_blocks;
  process_sack(segment, ack, newly_sacked);
  const bool dsack = stats_.dsack_blocks != prior_dsack_blocks;

  // RFC 7323 §4.3: an ACK of new data echoes the TSval of the segment that
  // advanced the window; valid even after retransmissions.
  std::optional<Duration> ts_rtt;
  if (peer_.timestamps && segment.options.timestamps && result == AckResult::Advanced) {
    const auto elapsed =
        static_cast<int32_t>(timestamp_value(now) - segment.options.timestamps->echo_reply);
    if (elapsed < 0) {
      stats_.input_errors.count(SenderInputError::TimestampEchoInFuture);
      SPDLOG_DEBUG("TSecr {} in the future", segment.options.timestamps->echo_reply);
    } else {
      // The TSval clock ticks in milliseconds: 0 means "under 1 ms", not an
      // RTT of zero (which would pull min RTT to 0 on sub-millisecond paths
      // and with it RACK's windows and bbr's BDP).
      ts_rtt = std::chrono::milliseconds(std::max<int32_t>(elapsed, 1));
    }
  }

  std::optional<Duration> rtt_sample;
  SackScoreboard::Acked acked;
  if (result == AckResult::Advanced) {
    acked = board_.acknowledge(ack);
    const uint64_t data_end = std::min(ack, fin_seqno());  // exclusive, in sequence numbers
    if (data_end > 1) {
      const uint64_t stream_end = data_end - 1;
      if (stream_end > outbound_.bytes_popped()) {
        outbound_.pop(stream_end - outbound_.bytes_popped());
      }
    }
    snd_una_ = ack;
    consecutive_retransmissions_ = 0;
    probe_start_.reset();
    // RFC 6298 §3 (Karn): no sample from a retransmitted segment, unless the
    // timestamp echo tells which transmission was acknowledged. An echo older
    // than the last retransmission means the peer acknowledged an earlier
    // copy whose ACK was lost: the time since includes our own timeout wait,
    // not the path (one such sample after a lost SYN-ACK or ACK would inflate
    // SRTT to seconds, and the RTO with it, on exactly the lossy links that
    // need a short one).
    if (!acked.any_retransmitted && acked.oldest_sent) {
      rtt_sample = now - *acked.oldest_sent;
    } else if (ts_rtt && acked.newest_retransmission &&
               static_cast<int32_t>(segment.options.timestamps->echo_reply -
                                    timestamp_value(*acked.newest_retransmission)) < 0) {
      ++stats_.ambiguous_rtt_samples;
    } else if (ts_rtt) {
      rtt_sample = ts_rtt;
    }
    if (rtt_sample) {
      // RFC 7323 Appendix G: every ACK is sampled, so weight each by the
      // number expected per round trip.
      const uint64_t expected = std::max<uint64_t>(1, (prior_flight + 2 * smss_ - 1) / (2 * smss_));
      rtt_.add_sample(*rtt_sample, static_cast<uint32_t>(std::min<uint64_t>(expected, 1u << 16)));
    }
    if (acked.syn && syn_timed_out_) {
      if (!rtt_sample && config_.rto_after_syn_timeout > Duration::zero()) {
        rtt_.raise_to_at_least(config_.rto_after_syn_timeout);  // RFC 6298 §5.7
      }
      // RFC 5681 §3.1: after a lost SYN the initial window is one segment.
      // A timeout of nothing in flight: cwnd drops, ssthresh stays.
      cc_->on_rto(LossEvent{now, 0, 0, true});
    }
    delivered_ += acked.bytes - acked.sacked_bytes;
    restart_timers_after_ack(now);
  }
  delivered_ += newly_sacked;

  // RFC 5681 §2: a duplicate ACK acknowledges nothing new, carries no data,
  // no SYN/FIN, leaves the window alone, and arrives with data outstanding.
  const bool duplicate = result == AckResult::Duplicate && segment.payload.empty() &&
                         !segment.syn && !segment.fin && !board_.empty() && wnd_ == prior_wnd &&
                         wnd_ > 0;
  if (duplicate) {
    ++stats_.duplicate_acks;
    ++dupacks_;
  } else if (result == AckResult::Advanced) {
    dupacks_ = 0;
  }

  uint64_t newly_lost = 0;
  if (peer_.sack) {
    newly_lost = board_.detect_losses();  // RFC 6675 §4 IsLost
  }
  if (rack_on()) {
    rack_on_ack(dsack, now);  // RFC 8985 §6.2
  }

  AckEvent event;
  event.now = now;
  event.bytes_acked = acked.bytes;
  event.bytes_sacked = newly_sacked;
  event.delivered_total = delivered_;
  event.prior_in_flight = prior_flight;
  event.rtt = rtt_sample;
  event.min_rtt = rtt_.min_rtt();
  event.srtt = rtt_.has_sample() ? rtt_.srtt() : Duration{0};
  event.cwnd_limited = cwnd_limited_ || prior_flight + smss_ > prior_cwnd;
  if (acked.bytes > 0 || newly_sacked > 0) {
    event.rate = make_rate_sample(now, newly_lost);
    event.in_flight = bytes_in_flight();
    cc_->on_delivery(event);
  }
  const bool tlp_reduced =
      tlp_on_ack(ack, result == AckResult::Duplicate && segment.payload.empty(),
                 segment.options.sack_count > 0, dsack, prior_flight, event);

  if (in_recovery_) {
    if (result == AckResult::Advanced) {
      if (ack >= recover_) {
        // RFC 6582 §3.2 step 3 full ACK / RFC 6675 §5: recovery ends.
        in_recovery_ = false;
        reno_dup_bytes_ = 0;
        event.in_flight = bytes_in_flight();
        cc_->on_recovery_exit(event);
        rack_.on_recovery_exit();
      } else if (!peer_.sack) {
        // Partial ACK without SACK: the dupacks counted for the segments it
        // covers (all but the retransmitted one) leave the estimate.
        const uint64_t beyond = acked.bytes > smss_ ? acked.bytes - smss_ : 0;
        reno_dup_bytes_ -= std::min(reno_dup_bytes_, beyond);
        event.in_flight = bytes_in_flight();
        if (cc_->on_partial_ack(event) == PartialAckResponse::ExitRecovery) {
          in_recovery_ = false;
          reno_dup_bytes_ = 0;
          dupacks_ = 0;
        } else if (board_.mark_front_lost()) {
          retransmit_now_ = true;  // RFC 6582 §3.2 step 3
        }
      }
    } else if (duplicate && !peer_.sack) {
      // Each further duplicate ACK: one more segment has left the network
      // (RFC 5681 §3.2 step 4's window inflation, counted into pipe instead).
      reno_dup_bytes_ = std::min(reno_dup_bytes_ + smss_, board_.outstanding_bytes());
    }
  } else {
    if (!peer_.sack) {
      if (result == AckResult::Advanced) {
        reno_dup_bytes_ = 0;
        limited_transmit_bytes_ = 0;
      } else if (duplicate) {
        // RFC 3042 limited transmit: each of the first DupThresh - 1
        // duplicate ACKs lets one new segment out. (With SACK the sacked
        // bytes leave pipe and do the same.)
        reno_dup_bytes_ =
            std::min<uint64_t>(uint64_t{std::min(dupacks_, SackScoreboard::kDupThresh - 1)} * smss_,
                               board_.outstanding_bytes());
      }
    }
    const bool loss = peer_.sack ? (board_.has_lost() || dupacks_ >= SackScoreboard::kDupThresh)
                                 : dupacks_ >= SackScoreboard::kDupThresh;
    // RFC 6582 §3.2 step 2: not again for losses from before the last
    // recovery point (or timeout).
    if (loss && snd_una_ >= recover_ && !board_.empty()) {
      enter_recovery(now);
    } else if (result == AckResult::Advanced && !tlp_reduced) {
      event.in_flight = bytes_in_flight();
      cc_->on_ack(event);
    }
  }
  if (result == AckResult::Advanced) {
    cwnd_limited_ = false;
    schedule_tlp(now);  // RFC 8985 §7.2: restarted by an ACK of new data
  } else if (pto_deadline_ && !tlp_allowed()) {
    pto_deadline_.reset();
  }
  if (result == AckResult::Advanced || newly_sacked > 0) {
    recovery_probes_out_ = 0;
    schedule_recovery_probe(now);
  } else if (recovery_probe_deadline_ && !recovery_probe_allowed()) {
    recovery_probe_deadline_.reset();
  }
  maybe_trace(now);
  return classify(result);
}

// ---------------------------------------------------------------------------
// Timers

void TcpSender::fail(SenderFailure why) {
  SPDLOG_DEBUG("sender gives up: {}", to_string(why));
  failure_ = why;
  rto_deadline_.reset();
  persist_deadline_.reset();
}

void TcpSender::on_rto(Instant now, const Transmit& transmit) {
  rto_deadline_.reset();
  if (board_.empty()) {
    return;
  }
  if (syn_acked() && wnd_ == 0) {
    on_persist(now, transmit);  // the peer's window is shut: probe instead
    return;
  }
  uint32_t limit = syn_acked()     ? config_.max_retransmissions
                   : passive_open_ ? config_.max_syn_ack_retransmissions
                                   : config_.max_syn_retransmissions;
  if (orphaned_) {
    limit = std::min(limit, config_.max_orphan_retransmissions);
  }
  if (consecutive_retransmissions_ >= limit) {
    fail(SenderFailure::MaxRetransmissions);
    return;
  }
  ++stats_.rto_expirations;
  if (syn_acked()) {
    cc_->on_rto(
        LossEvent{now, snd_nxt_ - snd_una_, bytes_in_flight(), consecutive_retransmissions_ > 0});
  } else {
    syn_timed_out_ = true;
  }
  // RFC 6582 §4 / RFC 6675 §5.1: leave recovery, everything unsacked is lost,
  // duplicate ACKs from the go-back must not start a fast retransmit.
  in_recovery_ = false;
  dupacks_ = 0;
  reno_dup_bytes_ = 0;
  limited_transmit_bytes_ = 0;
  recover_ = snd_nxt_;
  end_tlp_episode();
  recovery_probe_deadline_.reset();
  recovery_probes_out_ = 0;
  rack_.cancel_timer();
  if (board_.front().sacked) {
    // The receiver SACKed what it has not acknowledged and now times us
    // out: it reneged (RFC 2018 §8). Trust no SACK mark; retransmit from
    // the left edge (Linux's tcp_timeout_mark_lost does the same).
    board_.forget_sacks();
    ++stats_.sack_reneging;
  }
  board_.mark_all_lost();
  if (consecutive_retransmissions_ >= config_.linear_timeouts) {
    rtt_.backoff();  // RFC 6298 §5.5
  }
  ++consecutive_retransmissions_;
  detect_black_hole();
  const size_t index = board_.next_lost().value_or(0);
  retransmit(index, now, transmit);  // RFC 6298 §5.4
  arm_rto(now);                      // RFC 6298 §5.6
}

void TcpSender::detect_black_hole() {
  // RFC 4821 §7.2 / RFC 8899: full-sized segments that keep timing out, with
  // no ICMP telling why, may be too big for a path that drops them silently.
  // Every `black_hole_timeouts` consecutive timeouts of a segment above the
  // next step, the MSS steps down: 1024, then 536. Not searched back up.
  if (config_.black_hole_timeouts == 0 || !syn_acked() ||
      consecutive_retransmissions_ % config_.black_hole_timeouts != 0) {
    return;
  }
  const uint32_t room = segment_room();
  const uint32_t step = room > kBlackHoleMss ? kBlackHoleMss : kFloorMss;
  const OutstandingSegment& head = board_.front();
  const uint32_t payload = head.length - (head.fin ? 1u : 0u);
  if (room <= kFloorMss || payload + (room - smss_) <= step) {
    return;  // already small, or the segment would fit the next step anyway
  }
  if (lower_path_mss(step)) {
    ++stats_.black_hole_mss_reductions;
  }
}

void TcpSender::take_back_probe() {
  // The window opened with nothing but our zero-window probe outstanding,
  // not acknowledged (the receiver dropped it). Waiting for its RTO, or
  // holding the rest behind it (Nagle), would leave the window open and
  // unused: take the probe back, as if it had never been sent, so the data
  // goes out at once (Linux sends no data in its probes for the same
  // reason).
  if (!probe_start_ || *probe_start_ != snd_una_ || board_.empty() ||
      board_.front().start != snd_una_) {
    return;
  }
  board_.clear();
  snd_nxt_ = snd_una_;
  fin_sent_ = false;
  rto_deadline_.reset();
  probe_start_.reset();
  ++stats_.probes_taken_back;
}

void TcpSender::on_persist(Instant now, const Transmit& transmit) {
  persist_deadline_.reset();
  if (wnd_ > 0) {
    return;
  }
  // RFC 1122 §4.2.2.17: probing goes on while the peer answers; only
  // unanswered probes count toward giving up. Not for an orphan: nobody
  // will ever read what it waits to send.
  const uint32_t limit =
      orphaned_ ? std::min(config_.max_retransmissions, config_.max_orphan_retransmissions)
                : config_.max_retransmissions;
  if (persist_probes_out_ >= limit) {
    fail(SenderFailure::MaxRetransmissions);
    return;
  }
  if (!board_.empty()) {
    // Re-send the first outstanding segment (an earlier probe) as the probe.
    const OutstandingSegment seg = board_.front();
    board_.on_retransmitted(0, now);
    transmit_range(seg.start, seg.length, seg.syn, seg.fin, now, transmit);
  } else if (pending_bytes() > 0) {
    // RFC 9293 §3.8.6.1: one octet of new data beyond the zero window.
    const bool fin = outbound_.is_closed() && pending_bytes() == 1;
    const uint32_t length = fin ? 2u : 1u;
    probe_start_ = snd_nxt_;
    board_.add(snd_nxt_, length, false, fin, now);
    transmit_range(snd_nxt_, length, false, fin, now, transmit);
    unacked_since_ = now;
    snd_nxt_ += length;
    fin_sent_ = fin;
  } else if (outbound_.is_closed() && !fin_sent_) {
    probe_start_ = snd_nxt_;
    board_.add(snd_nxt_, 1, false, true, now);
    transmit_range(snd_nxt_, 1, false, true, now, transmit);
    unacked_since_ = now;
    snd_nxt_ += 1;
    fin_sent_ = true;
  } else {
    return;
  }
  ++stats_.zero_window_probes;
  ++persist_probes_out_;
  // RFC 1122 §4.2.2.17: exponential backoff of the probe interval.
  persist_interval_ = std::min(persist_interval_ * 2, config_.rto_max);
  if (persist_interval_ <= Duration::zero()) {
    persist_interval_ = rtt_.rto();
  }
  persist_deadline_ = now + persist_interval_;
}

std::optional<Instant> TcpSender::keepalive_deadline() const {
  if (!config_.keepalive || failure_ || !syn_acked() || !board_.empty()) {
    return std::nullopt;
  }
  if (keepalive_probes_out_ == 0) {
    return std::max(last_heard_, last_keepalive_) + config_.keepalive_idle;
  }
  return last_keepalive_ + config_.keepalive_interval;
}

void TcpSender::on_keepalive(Instant now, const Transmit& transmit) {
  if (keepalive_probes_out_ >= config_.keepalive_probes) {
    fail(SenderFailure::KeepaliveTimeout);
    return;
  }
  // RFC 1122 §4.2.3.6: SEG.SEQ = SND.NXT - 1, no data; the peer must ACK it.
  TcpSegment seg;
  seg.seqno = Wrap32::wrap(snd_nxt_ - 1, isn_);
  if (peer_.timestamps) {
    seg.options.timestamps = Timestamps{timestamp_value(now), 0};
  }
  ++stats_.keepalive_probes;
  ++stats_.segments_sent;
  ++keepalive_probes_out_;
  last_keepalive_ = now;
  transmit(seg);
}

void TcpSender::tick(Instant now, const Transmit& transmit) {
  if (failure_) {
    return;
  }
  if (config_.user_timeout > Duration::zero() && unacked_since_ &&
      now - *unacked_since_ >= config_.user_timeout) {
    fail(SenderFailure::UserTimeout);  // RFC 9293 §3.8.3, RFC 5482
    return;
  }
  if (rack_.deadline() && now >= *rack_.deadline()) {
    on_rack_timer(now, transmit);
  }
  if (pto_deadline_ && now >= *pto_deadline_) {
    on_pto(now, transmit);
  }
  if (recovery_probe_deadline_ && now >= *recovery_probe_deadline_) {
    on_recovery_probe(now, transmit);
  }
  if (rto_deadline_ && now >= *rto_deadline_) {
    on_rto(now, transmit);
  }
  if (!failure_ && persist_deadline_ && now >= *persist_deadline_) {
    on_persist(now, transmit);
  }
  if (!failure_) {
    if (const auto due = keepalive_deadline(); due && now >= *due) {
      on_keepalive(now, transmit);
    }
  }
  if (!failure_ && pacing_release_ && now >= *pacing_release_) {
    // The pacing release: resume sending.
    pacing_release_.reset();
    if (syn_acked() && wnd_ > 0 && send_retransmissions(now, transmit)) {
      send_new_data(now, transmit);
    }
    check_app_limited();
  }
  maybe_trace(now);
}

std::optional<Instant> TcpSender::next_deadline() const {
  if (failure_) {
    return std::nullopt;
  }
  std::optional<Instant> next;
  auto consider = [&next](std::optional<Instant> t) {
    if (t && (!next || *t < *next)) {
      next = t;
    }
  };
  consider(rto_deadline_);
  consider(rack_.deadline());
  consider(pto_deadline_);
  consider(recovery_probe_deadline_);
  consider(persist_deadline_);
  consider(keepalive_deadline());
  consider(pacing_release_);
  if (config_.user_timeout > Duration::zero() && unacked_since_) {
    consider(*unacked_since_ + config_.user_timeout);
  }
  return next;
}

// ---------------------------------------------------------------------------
// Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation) and pacing

void TcpSender::stamp_rate(OutstandingSegment& seg, bool pipe_was_empty, Instant now) {
  if (!rate_sampling_) {
    return;
  }
  // §3.2: a flight starting from an empty pipe starts the clocks afresh.
  if (pipe_was_empty) {
    first_sent_time_ = now;
    delivered_time_ = now;
  }
  seg.delivered = delivered_;
  seg.delivered_time = delivered_time_;
  seg.first_sent_time = first_sent_time_;
  seg.app_limited = app_limited_until_ != 0;
}

std::optional<RateSample> TcpSender::make_rate_sample(Instant now, uint64_t newly_lost) {
  if (!rate_sampling_) {
    return std::nullopt;
  }
  const auto newest = board_.take_newest_delivered();
  // §3.3: the app-limited stretch ends once its data is delivered.
  if (app_limited_until_ != 0 && delivered_ > app_limited_until_) {
    app_limited_until_ = 0;
  }
  if (!newest) {
    return std::nullopt;
  }
  delivered_time_ = now;
  first_sent_time_ = newest->sent_at;
  RateSample rs;
  rs.prior_delivered = newest->delivered;
  rs.delivered = delivered_ - newest->delivered;
  rs.is_app_limited = newest->app_limited;
  rs.send_elapsed = newest->sent_at - newest->first_sent_time;
  rs.ack_elapsed = now - newest->delivered_time;
  // §3.3: the slower of sending and acknowledging the flight; ACKs can be
  // compressed, but the network cannot deliver faster than we sent.
  rs.interval = std::max(rs.send_elapsed, rs.ack_elapsed);
  rs.newly_lost = newly_lost;
  if (!newest->ever_retransmitted) {
    rs.rtt = now - newest->sent_at;  // RFC 6298 §3 (Karn): only unambiguous ones
  }
  if (rs.interval > Duration::zero() && rs.interval >= rtt_.min_rtt()) {
    rs.delivery_rate = static_cast<uint64_t>(
        std::llround(static_cast<double>(rs.delivered) / to_seconds(rs.interval)));
  }
  return rs;
}

void TcpSender::check_app_limited() {
  // §3.4: less than a segment left to send, the window not full and no loss
  // waiting for repair: the application, not the network, sets the rate.
  if (!rate_sampling_ || !syn_acked() || (outbound_.is_closed() && !fin_sent_)) {
    return;
  }
  if (pending_bytes() < smss_ && !pacing_release_ && bytes_in_flight() < cc_->cwnd() &&
      !board_.has_lost()) {
    app_limited_until_ = std::max<uint64_t>(delivered_ + bytes_in_flight(), 1);
  }
}

bool TcpSender::pacing_allows(uint64_t bytes, Instant now) {
  const auto rate = cc_->pacing_rate();
  if (!rate) {
    return true;
  }
  // A release may carry a burst of max(2 segments, 1 ms at the rate): the
  // paced stream may run that far ahead of now.
  const Duration burst =
      std::max<Duration>(time_at_rate(2 * uint64_t{smss_}, *rate), std::chrono::milliseconds(1));
  const Instant base = std::max(pace_next_, now);
  if ((base - now) + time_at_rate(bytes, *rate) <= burst) {
    return true;
  }
  // Wait until the paced stream is back at now: a whole burst then fits.
  pacing_release_ = pace_next_;
  return false;
}

void TcpSender::pacing_on_sent(uint64_t bytes, Instant now) {
  if (const auto rate = cc_->pacing_rate()) {
    pace_next_ = std::max(pace_next_, now) + time_at_rate(bytes, *rate);
  }
}

// ---------------------------------------------------------------------------
// RFC 8985 RACK-TLP

Instant TcpSender::rack_ambiguous_after(const TcpSegment& segment, Instant now) const {
  // RFC 8985 §6.2 step 2: a retransmission delivered less than min_rtt after
  // it was sent, or sent after the TSval this ACK echoes, may be the
  // original's delivery; it gives RACK no sample.
  Instant bound = now - rtt_.min_rtt();
  // The echo only matters when retransmissions are outstanding (it costs
  // a division per ACK otherwise).
  const bool retransmissions = board_.retransmitted_bytes() > 0 || tlp_end_seq_;
  if (retransmissions && peer_.timestamps && segment.options.timestamps) {
    const auto elapsed =
        static_cast<int32_t>(timestamp_value(now) - segment.options.timestamps->echo_reply);
    if (elapsed >= 0) {
      // TSval is the send time in whole milliseconds: anything sent before
      // the end of the echoed millisecond may be what is acknowledged.
      const auto now_ms = std::chrono::floor<std::chrono::milliseconds>(now.since_epoch());
      const Instant echoed = Instant::from_epoch(now_ms - std::chrono::milliseconds(elapsed) +
                                                 std::chrono::milliseconds(1) - Duration(1));
      bound = std::min(bound, echoed);
    }
  }
  return bound;
}

void TcpSender::rack_on_ack(bool dsack, Instant now) {
  Rack::AckInfo info;
  info.now = now;
  info.delivered = &board_.delivery();
  info.dsack = dsack;
  info.snd_una = snd_una_;
  info.snd_nxt = snd_nxt_;
  rack_.on_ack(info);
  rack_detect(now);
}

void TcpSender::rack_detect(Instant now) {
  Rack::WindowInputs in;
  in.min_rtt = rtt_.min_rtt();
  in.srtt = rtt_.has_sample() ? rtt_.srtt() : Duration::zero();
  in.in_recovery = in_recovery_ || snd_una_ < recover_;  // fast or RTO recovery
  in.sacked_segments = board_.sacked_segments();
  const Rack::Detection found = rack_.detect_losses(board_, now, in);
  if (found.marked_lost == 0) {
    return;
  }
  stats_.rack_marked_lost += found.marked_lost;
  stats_.lost_retransmissions_detected += found.lost_retransmissions;
}

void TcpSender::on_rack_timer(Instant now, const Transmit& transmit) {
  // RFC 8985 §6.3: the reordering window of a segment ran out.
  rack_.cancel_timer();
  rack_detect(now);
  if (board_.has_lost() && !in_recovery_ && snd_una_ >= recover_ && !board_.empty()) {
    enter_recovery(now);
  }
  if (wnd_ > 0) {
    send_retransmissions(now, transmit);
  }
}

bool TcpSender::tlp_allowed() const {
  // RFC 8985 §7.2: SACK, not in fast or RTO recovery, nothing sacked, and no
  // probe already unanswered.
  return rack_on() && syn_acked() && !board_.empty() && !in_recovery_ && snd_una_ >= recover_ &&
         !tlp_end_seq_ && board_.sacked_segments() == 0 && !board_.has_lost() && wnd_ > 0 &&
         rto_deadline_.has_value();
}

void TcpSender::schedule_tlp(Instant now) {
  pto_deadline_.reset();
  if (!tlp_allowed()) {
    return;
  }
  // RFC 8985 §7.2 TLP_calc_PTO: 2 SRTT, plus the peer's delayed ACK when a
  // single segment cannot elicit an immediate ACK; never after the RTO.
  Duration pto = std::chrono::seconds(1);
  if (rtt_.has_sample()) {
    pto = 2 * rtt_.srtt();
    if (snd_nxt_ - snd_una_ <= smss_) {
      pto += config_.tlp_max_ack_delay;
    }
  }
  pto_deadline_ = std::min(now + pto, *rto_deadline_);
}

bool TcpSender::send_probe_new_data(Instant now, const Transmit& transmit) {
  // RFC 8985 §7.3: one new segment if there is one and the peer's window
  // takes it; cwnd is not consulted.
  const uint64_t pending = pending_bytes();
  const uint64_t right_edge = snd_una_ + wnd_;
  const uint64_t usable_wnd = right_edge > snd_nxt_ ? right_edge - snd_nxt_ : 0;
  const uint64_t len = std::min<uint64_t>({pending, new_segment_payload(), usable_wnd});
  if (fin_sent_ || len == 0) {
    return false;
  }
  const bool fin = outbound_.is_closed() && len == pending && len + 1 <= usable_wnd;
  const uint32_t length = static_cast<uint32_t>(len) + (fin ? 1u : 0u);
  board_.add(snd_nxt_, length, false, fin, now);
  transmit_range(snd_nxt_, length, false, fin, now, transmit);
  snd_nxt_ += length;
  fin_sent_ = fin;
  return true;
}

void TcpSender::on_pto(Instant now, const Transmit& transmit) {
  pto_deadline_.reset();
  if (!tlp_allowed()) {
    return;
  }
  tlp_is_retrans_ = !send_probe_new_data(now, transmit);
  if (tlp_is_retrans_) {
    retransmit(board_.size() - 1, now, transmit);  // the last segment again
  }
  tlp_end_seq_ = snd_nxt_;
  ++stats_.tlp_probes;
  rto_deadline_ = now + rtt_.rto();  // §7.3: the RTO, not another PTO, is next
}

bool TcpSender::tlp_on_ack(uint64_t ack, bool duplicate, bool sacks, bool dsack,
                           uint64_t prior_flight, const AckEvent& event) {
  // RFC 8985 §7.4: did the probe repair a loss?
  if (!tlp_end_seq_ || ack < *tlp_end_seq_) {
    return false;
  }
  if (!tlp_is_retrans_ || dsack) {
    end_tlp_episode();  // new data, or the original arrived as well: no loss
    return false;
  }
  if (ack > *tlp_end_seq_) {
    // Only the probe arrived: the original was lost, and the probe repaired
    // it. One congestion response, as for a recovery that starts and ends.
    end_tlp_episode();
    ++stats_.tlp_recoveries;
    cc_->on_congestion_event(LossEvent{event.now, prior_flight, bytes_in_flight()});
    AckEvent exit = event;
    exit.in_flight = bytes_in_flight();
    cc_->on_recovery_exit(exit);
    recover_ = snd_nxt_;  // RFC 6582 §3.2: not again for this window
    return true;
  }
  if (duplicate && !sacks) {
    end_tlp_episode();  // a duplicate ACK for the second copy: no loss
  }
  return false;
}

void TcpSender::end_tlp_episode() {
  tlp_end_seq_.reset();
  pto_deadline_.reset();
}

bool TcpSender::recovery_probe_allowed() const {
  // Where a tail loss probe is not (§7.2): in recovery, or with sacked
  // segments; and only once every segment known to be lost went out again
  // (until then the ACKs those bring are what drives recovery) and no RACK
  // reordering timer is about to decide.
  return config_.recovery_probes && rack_on() && syn_acked() && !board_.empty() &&
         (in_recovery_ || board_.sacked_segments() > 0) && !board_.has_lost() && wnd_ > 0 &&
         rto_deadline_.has_value() && !rack_.deadline() && rtt_.has_sample();
}

void TcpSender::schedule_recovery_probe(Instant now) {
  recovery_probe_deadline_.reset();
  if (!recovery_probe_allowed()) {
    return;
  }
  // 2 SRTT, as a PTO, doubling with each unanswered probe; none at or after
  // the RTO, which sends the same segment. Out-of-order and hole-filling segments are acknowledged
  // at once (RFC 5681 §4.2), so no delayed-ACK allowance.
  static constexpr Duration kFloor = std::chrono::milliseconds(1);
  const Duration pto =
      std::max(2 * rtt_.srtt(), kFloor) * (1u << std::min(recovery_probes_out_, 16u));
  if (now + pto < *rto_deadline_) {
    recovery_probe_deadline_ = now + pto;
  }
}

void TcpSender::on_recovery_probe(Instant now, const Transmit& transmit) {
  recovery_probe_deadline_.reset();
  if (!recovery_probe_allowed()) {
    return;
  }
  // The first segment the peer has not acknowledged or sacked: the hole that
  // holds SND.UNA back.
  size_t i = 0;
  while (i < board_.size() && board_[i].sacked) {
    ++i;
  }
  if (i == board_.size()) {
    return;
  }
  ++recovery_probes_out_;
  ++stats_.recovery_probes;
  retransmit(i, now, transmit);  // the RTO keeps running: a probe is not a timeout
  schedule_recovery_probe(now);
}

// ---------------------------------------------------------------------------
// Observers

Wrap32 TcpSender::isn() const {
  return isn_;
}
Wrap32 TcpSender::next_seqno() const {
  return Wrap32::wrap(snd_nxt_, isn_);
}
Wrap32 TcpSender::oldest_unacked() const {
  return Wrap32::wrap(snd_una_, isn_);
}
uint64_t TcpSender::sequence_numbers_in_flight() const {
  return snd_nxt_ - snd_una_;
}
uint32_t TcpSender::consecutive_retransmissions() const {
  return consecutive_retransmissions_;
}
bool TcpSender::syn_sent() const {
  return syn_sent_;
}
bool TcpSender::syn_acked() const {
  return snd_una_ > 0;
}
bool TcpSender::fin_sent() const {
  return fin_sent_;
}
bool TcpSender::fin_acked() const {
  return fin_sent_ && snd_una_ == snd_nxt_;
}
std::optional<SenderFailure> TcpSender::failure() const {
  return failure_;
}
const SenderStats& TcpSender::stats() const {
  return stats_;
}

uint64_t TcpSender::writable_bytes() const {
  const uint64_t free = outbound_.available_capacity();
  if (!config_.autotune_send_buffer) {
    return free;
  }
  // Only bytes not yet sent count: those sent and unacknowledged (SACKed ones
  // included, which heavy loss keeps around for a while) are bounded by the
  // windows already, and counting them starved the sender of new data at 20%
  // loss.
  const uint64_t limit = std::max(config_.send_buffer_floor, 2 * cc_->cwnd());
  const uint64_t unsent = pending_bytes();
  return unsent >= limit ? 0 : std::min(free, limit - unsent);
}

SenderState TcpSender::state() const {
  SenderState s;
  s.cwnd = cc_->cwnd();
  s.ssthresh = cc_->ssthresh();
  s.bytes_in_flight = bytes_in_flight();
  s.srtt = rtt_.srtt();
  s.rttvar = rtt_.rttvar();
  s.rto = rtt_.rto();
  s.in_recovery = in_recovery_;
  s.tlp_outstanding = tlp_end_seq_.has_value();
  return s;
}

void TcpSender::set_trace(Trace trace) {
  trace_ = std::move(trace);
  traced_ = state();
}

void TcpSender::maybe_trace(Instant now) {
  if (!trace_) {
    return;
  }
  const SenderState s = state();
  if (s.cwnd != traced_.cwnd || s.ssthresh != traced_.ssthresh || s.srtt != traced_.srtt ||
      s.rttvar != traced_.rttvar || s.rto != traced_.rto) {
    traced_ = s;
    trace_(now, s);
  }
}

}  // namespace tinytcp::tcp

#include "tcp/tcp_sender.hh"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

#include "tcp/congestion/reno.hh"
#include "util/check.hh"

namespace tinytcp::tcp {

namespace {

// Below this the peer's MSS is nonsense; raised to it (Linux uses 48).
constexpr uint16_t kMinPeerMss = 64;
// RFC 7323 §2.3.
constexpr uint8_t kMaxWindowShift = 14;

}  // namespace

TcpSender::TcpSender(const TcpConfig& config, Wrap32 isn, std::optional<uint32_t> ts_offset)
    // RFC 7323 §7.1: an offset the peer cannot relate to our uptime or ISN
    // (the Host keys one per address pair); without one, the ISN keeps
    // in-memory tests deterministic.
    : state_(config, isn, ts_offset.value_or(isn.raw()), PathMss::initial_smss(config)) {
  SendState& s = state_;
  s.peer.mss = config.default_peer_mss;
  const CongestionParams params{s.smss, config.initial_window_segments};
  auto cc = make_congestion_control(config.congestion_control, params);
  if (cc) {
    s.cc = std::move(cc).value();
  } else {
    cc_error_ = cc.error();
    spdlog::warn("{}; using reno", cc.error());
    s.cc = std::make_unique<Reno>(params);
  }
  rate_.set_enabled(s.cc->wants_rate_samples());
  s.board.set_smss(s.smss);
  segmenter_.reserve(s.smss);
  traced_ = state();
}

TcpSender::~TcpSender() = default;
TcpSender::TcpSender(TcpSender&&) noexcept = default;
TcpSender& TcpSender::operator=(TcpSender&&) noexcept = default;

void TcpSender::set_congestion_control(std::unique_ptr<CongestionControl> cc) {
  TINYTCP_DCHECK(cc != nullptr && state_.snd_nxt <= 1);
  state_.cc = std::move(cc);
  state_.cc->set_mss(state_.smss);
  rate_.set_enabled(state_.cc->wants_rate_samples());
  cc_error_.reset();
  traced_ = state();
}

stream::ByteStream& TcpSender::outbound() {
  return state_.outbound;
}
const stream::ByteStream& TcpSender::outbound() const {
  return state_.outbound;
}

void TcpSender::set_peer_options(const PeerOptions& options) {
  PeerOptions& peer = state_.peer;
  peer = options;
  if (peer.send_window_shift > kMaxWindowShift) {
    state_.stats.input_errors.count(SenderInputError::WindowScaleTooLarge);
    SPDLOG_DEBUG("peer window shift {} clamped to 14", peer.send_window_shift);
    peer.send_window_shift = kMaxWindowShift;
  }
  if (peer.mss < kMinPeerMss) {
    state_.stats.input_errors.count(SenderInputError::PeerMssTooSmall);
    SPDLOG_DEBUG("peer MSS {} raised to {}", peer.mss, kMinPeerMss);
    peer.mss = kMinPeerMss;
  }
  if (!state_.config.sack) {
    peer.sack = false;  // the switch that compares SACK and cumulative-ACK recovery
  }
  if (!state_.config.timestamps) {
    peer.timestamps = false;
  }
  path_mss_.update_smss(state_);
  segmenter_.reserve(state_.smss);
}

bool TcpSender::in_flight(Wrap32 seqno) const {
  const uint64_t seq = seqno.unwrap(state_.isn, state_.snd_una);
  return seq >= state_.snd_una && seq < state_.snd_nxt;
}

bool TcpSender::on_send_failed(Wrap32 seqno, Instant now) {
  SendState& s = state_;
  if (failure_ || !s.syn_acked()) {
    return false;  // a SYN goes again on its own timer
  }
  const auto index = s.board.entry_starting_at(seqno.unwrap(s.isn, s.snd_una));
  if (!index) {
    return false;
  }
  // Already sacked, or already lost and not yet sent again: nothing new.
  if (!s.board.mark_lost_by_time(*index)) {
    return false;
  }
  ++s.stats.local_send_failures;
  resend_due_ = now;
  // Local congestion (Linux: tcp_enter_cwr): one response, then the usual
  // recovery rules send what is marked lost.
  if (!recovery_.in_recovery() && recovery_.may_enter(s)) {
    ++s.stats.local_congestion_events;
    recovery_.enter_on_local_drop(s, now);
    rack_tlp_.on_recovery_start();
  }
  return true;
}

bool TcpSender::on_path_mtu(uint32_t mtu, Instant now) {
  if (!path_mss_.on_path_mtu(state_, mtu, now)) {
    return false;
  }
  segmenter_.reserve(state_.smss);
  return true;
}

uint32_t TcpSender::new_segment_payload() const {
  return state_.new_segment_payload();
}

uint64_t TcpSender::bytes_in_flight() const {
  return state_.bytes_in_flight();
}

// ---------------------------------------------------------------------------
// Sending

void TcpSender::push(Instant now, const Transmit& transmit) {
  if (failure_) {
    return;
  }
  SendState& s = state_;
  if (!s.syn_sent) {
    segmenter_.send_syn(path(), now, transmit);
    maybe_trace(now);
    return;
  }
  if (!s.syn_acked()) {
    return;
  }
  if (path_mss_.expire(s, now)) {
    segmenter_.reserve(s.smss);
  }
  const uint64_t prior_nxt = s.snd_nxt;
  if (s.wnd > 0 && send_retransmissions(now, transmit)) {
    segmenter_.send_new_data(path(), now, transmit);
  }
  rack_tlp_.after_send(s, recovery_, timers_, s.snd_nxt != prior_nxt, now);
  check_app_limited();
  timers_.arm_persist_if_stalled(s, now);
  maybe_trace(now);
}

void TcpSender::restore_syn(Instant now) {
  SendState& s = state_;
  s.syn_sent = true;
  s.board.add(0, 1, true, false, now);
  s.board.on_retransmitted(0, now);
  rate_.stamp(s.board[0], true, now);
  s.snd_nxt = 1;
  s.unacked_since = now;
  timers_.arm_rto(s, now);
}

TcpSegment TcpSender::make_empty_segment() const {
  TcpSegment seg;
  seg.seqno = Wrap32::wrap(state_.snd_nxt, state_.isn);
  return seg;
}

TcpSegment TcpSender::make_empty_segment(Instant now) const {
  TcpSegment seg = make_empty_segment();
  if (state_.peer.timestamps) {
    seg.options.timestamps = Timestamps{timestamp_value(now), 0};
  }
  return seg;
}

void TcpSender::check_app_limited() {
  // Delivery-rate sampling §3.4: less than a segment left to send, the
  // window not full and no loss waiting for repair: the application, not
  // the network, sets the rate.
  const SendState& s = state_;
  if (!rate_.enabled() || !s.syn_acked() || (s.outbound.is_closed() && !s.fin_sent)) {
    return;
  }
  if (s.pending_bytes() < s.smss && !pacer_.release() && s.bytes_in_flight() < s.cc->cwnd() &&
      !s.board.has_lost()) {
    rate_.mark_app_limited(s.bytes_in_flight());
  }
}

// ---------------------------------------------------------------------------
// Receiving acknowledgments

AckResult TcpSender::receive(const TcpSegment& segment, Instant now) {
  SendState& s = state_;
  timers_.on_heard(now);
  auto classify = [&s](AckResult r) {
    ++s.stats.acks[static_cast<size_t>(r)];
    return r;
  };
  if (!segment.ack) {
    return classify(AckResult::NoAck);
  }
  // Compared modulo 2^32 from SND.UNA (RFC 9293 §3.4, Linux's before() and
  // after()): an ACK below the ISN early in a connection is old, not unsent.
  const int32_t from_una = segment.ackno - Wrap32::wrap(s.snd_una, s.isn);
  if (!s.syn_sent || (from_una > 0 && static_cast<uint64_t>(from_una) > s.snd_nxt - s.snd_una)) {
    SPDLOG_DEBUG("ACK {} beyond SND.NXT", segment.ackno);
    return classify(AckResult::Unsent);
  }
  if (from_una < 0) {
    // RFC 5961 §5.2: acceptable down to SND.UNA - MAX.SND.WND.
    if (static_cast<uint64_t>(-static_cast<int64_t>(from_una)) <= s.max_wnd) {
      return classify(AckResult::Old);
    }
    SPDLOG_DEBUG("ACK {} too old (RFC 5961)", segment.ackno);
    return classify(AckResult::TooOld);
  }
  const uint64_t ack = s.snd_una + static_cast<uint64_t>(from_una);
  const AckResult result = from_una > 0 ? AckResult::Advanced : AckResult::Duplicate;
  const bool advanced = result == AckResult::Advanced;
  if (!orphaned_) {
    timers_.reset_persist_probes();  // the peer answers
  }
  const uint64_t prior_flight = s.bytes_in_flight();
  const uint64_t prior_wnd = s.wnd;
  const uint64_t prior_cwnd = s.cc->cwnd();

  ack_intake_.update_window(s, timers_, segment, ack, now);
  if (prior_wnd == 0 && s.wnd > 0 && ack == s.snd_una && segment.options.sack_count == 0 &&
      segmenter_.take_back_zero_window_probe(s)) {
    timers_.cancel_rto();
  }

  s.board.begin_delivery(RackTlp::on(s) ? rack_tlp_.ambiguous_after(s, segment, now) : now);
  const uint64_t prior_dsack_blocks = s.stats.dsack_blocks;
  const uint64_t newly_sacked = AckIntake::take_sacks(s, segment, ack);
  const bool dsack = s.stats.dsack_blocks != prior_dsack_blocks;
  const std::optional<Duration> ts_rtt =
      advanced ? AckIntake::timestamp_rtt(s, segment, now) : std::nullopt;

  std::optional<Duration> rtt;
  SackScoreboard::Acked acked;
  if (advanced) {
    acked = s.board.acknowledge(ack);
    const uint64_t data_end = std::min(ack, s.fin_seqno());  // exclusive, in sequence numbers
    if (data_end > 1) {
      const uint64_t stream_end = data_end - 1;
      if (stream_end > s.outbound.bytes_popped()) {
        s.outbound.pop(stream_end - s.outbound.bytes_popped());
      }
    }
    s.snd_una = ack;
    s.consecutive_retransmissions = 0;
    s.probe_start.reset();
    rtt = AckIntake::rtt_sample(s, segment, acked, ts_rtt, prior_flight, now);
    if (acked.syn && syn_timed_out_) {
      if (!rtt && s.config.rto_after_syn_timeout > Duration::zero()) {
        s.rtt.raise_to_at_least(s.config.rto_after_syn_timeout);  // RFC 6298 §5.7
      }
      // RFC 5681 §3.1: after a lost SYN the initial window is one segment.
      // A timeout of nothing in flight: cwnd drops, ssthresh stays.
      s.cc->on_rto(LossEvent{now, 0, 0, true});
    }
    rate_.on_delivered(acked.bytes - acked.sacked_bytes);
    timers_.restart_after_ack(s, now);
  }
  rate_.on_delivered(newly_sacked);

  // RFC 5681 §2: a duplicate ACK acknowledges nothing new, carries no data,
  // no SYN/FIN, leaves the window alone, and arrives with data outstanding.
  const bool duplicate = result == AckResult::Duplicate && segment.payload.empty() &&
                         !segment.syn && !segment.fin && !s.board.empty() && s.wnd == prior_wnd &&
                         s.wnd > 0;
  // RFC 6675 §2: with SACK, a duplicate ACK is one that SACKs octets not
  // SACKed before, whatever else it does; one whose SACK blocks were all
  // invalid (or that has none) does not count toward DupThresh.
  recovery_.count_ack(s, s.peer.sack ? newly_sacked > 0 : duplicate, advanced);

  uint64_t newly_lost = 0;
  if (s.peer.sack) {
    newly_lost = s.board.detect_losses();  // RFC 6675 §4 IsLost
  }
  if (RackTlp::on(s)) {
    rack_tlp_.on_ack(s, recovery_, dsack, now);  // RFC 8985 §6.2
  }

  AckEvent event;
  event.now = now;
  event.bytes_acked = acked.bytes;
  event.bytes_sacked = newly_sacked;
  event.delivered_total = rate_.delivered();
  event.prior_in_flight = prior_flight;
  event.rtt = rtt;
  event.min_rtt = s.rtt.min_rtt();
  event.srtt = s.rtt.has_sample() ? s.rtt.srtt() : Duration{0};
  event.cwnd_limited = recovery_.cwnd_limited() || prior_flight + s.smss > prior_cwnd;
  if (acked.bytes > 0 || newly_sacked > 0) {
    event.rate = rate_.sample(s.board, s.rtt.min_rtt(), newly_lost, now);
    event.in_flight = s.bytes_in_flight();
    s.cc->on_delivery(event);
  }
  const bool tlp_reduced = rack_tlp_.on_probe_ack(
      s, recovery_, ack, result == AckResult::Duplicate && segment.payload.empty(),
      segment.options.sack_count > 0, dsack, prior_flight, event);
  if (recovery_.on_ack(s, rack_tlp_.rack(), advanced, ack, duplicate, acked.bytes, tlp_reduced,
                       event)) {
    enter_recovery(now);
  }
  if (advanced) {
    recovery_.set_cwnd_limited(false);
  }
  rack_tlp_.after_ack(s, recovery_, timers_, advanced, newly_sacked > 0, now);
  maybe_trace(now);
  return classify(result);
}

void TcpSender::enter_recovery(Instant now) {
  recovery_.enter(state_, now);
  rack_tlp_.on_recovery_start();
}

// ---------------------------------------------------------------------------
// Timers

void TcpSender::fail(SenderFailure why) {
  SPDLOG_DEBUG("sender gives up: {}", to_string(why));
  failure_ = why;
  timers_.stop();
}

void TcpSender::on_rto(Instant now, const Transmit& transmit) {
  SendState& s = state_;
  timers_.cancel_rto();
  if (s.board.empty()) {
    return;
  }
  if (s.syn_acked() && s.wnd == 0) {
    on_persist(now, transmit);  // the peer's window is shut: probe instead
    return;
  }
  uint32_t limit = s.syn_acked()   ? s.config.max_retransmissions
                   : passive_open_ ? s.config.max_syn_ack_retransmissions
                                   : s.config.max_syn_retransmissions;
  if (orphaned_) {
    limit = std::min(limit, s.config.max_orphan_retransmissions);
  }
  if (s.consecutive_retransmissions >= limit) {
    fail(SenderFailure::MaxRetransmissions);
    return;
  }
  ++s.stats.rto_expirations;
  if (s.syn_acked()) {
    s.cc->on_rto(LossEvent{now, s.snd_nxt - s.snd_una, s.bytes_in_flight(),
                           s.consecutive_retransmissions > 0});
  } else {
    syn_timed_out_ = true;
  }
  recovery_.on_timeout(s);
  rack_tlp_.on_timeout();
  if (s.board.front().sacked) {
    // The receiver SACKed what it has not acknowledged and now times us
    // out: it reneged (RFC 2018 §8). Trust no SACK mark; retransmit from
    // the left edge (Linux's tcp_timeout_mark_lost does the same).
    s.board.forget_sacks();
    ++s.stats.sack_reneging;
  }
  s.board.mark_all_lost();
  if (s.consecutive_retransmissions >= s.config.linear_timeouts) {
    s.rtt.backoff();  // RFC 6298 §5.5
  }
  ++s.consecutive_retransmissions;
  if (path_mss_.on_timeout(s, now)) {
    segmenter_.reserve(s.smss);
  }
  const size_t index = s.board.next_lost().value_or(0);
  retransmit(index, now, transmit);  // RFC 6298 §5.4
  timers_.arm_rto(s, now);           // RFC 6298 §5.6
}

void TcpSender::on_persist(Instant now, const Transmit& transmit) {
  SendState& s = state_;
  timers_.cancel_persist();
  if (s.wnd > 0) {
    return;
  }
  // RFC 1122 §4.2.2.17: probing goes on while the peer answers; only
  // unanswered probes count toward giving up. Not for an orphan: nobody
  // will ever read what it waits to send.
  const uint32_t limit =
      orphaned_ ? std::min(s.config.max_retransmissions, s.config.max_orphan_retransmissions)
                : s.config.max_retransmissions;
  if (timers_.persist_probes_out() >= limit) {
    fail(SenderFailure::MaxRetransmissions);
    return;
  }
  if (!segmenter_.send_zero_window_probe(s, now, transmit)) {
    return;
  }
  ++s.stats.zero_window_probes;
  timers_.on_persist_probe(s, now);
}

std::optional<Instant> TcpSender::keepalive_deadline() const {
  if (failure_) {
    return std::nullopt;
  }
  return timers_.keepalive(state_);
}

void TcpSender::on_keepalive(Instant now, const Transmit& transmit) {
  SendState& s = state_;
  if (timers_.keepalive_probes_out() >= s.config.keepalive_probes) {
    fail(SenderFailure::KeepaliveTimeout);
    return;
  }
  // RFC 1122 §4.2.3.6: SEG.SEQ = SND.NXT - 1, no data; the peer must ACK it.
  TcpSegment seg;
  seg.seqno = Wrap32::wrap(s.snd_nxt - 1, s.isn);
  if (s.peer.timestamps) {
    seg.options.timestamps = Timestamps{timestamp_value(now), 0};
  }
  ++s.stats.keepalive_probes;
  ++s.stats.segments_sent;
  timers_.on_keepalive_probe(now);
  transmit(seg);
}

void TcpSender::tick(Instant now, const Transmit& transmit) {
  if (failure_) {
    return;
  }
  SendState& s = state_;
  if (s.config.user_timeout > Duration::zero() && s.unacked_since &&
      now - *s.unacked_since >= s.config.user_timeout) {
    fail(SenderFailure::UserTimeout);  // RFC 9293 §3.8.3, RFC 5482
    return;
  }
  rack_tlp_.on_tick(path(), segmenter_, now, transmit);
  if (timers_.rto() && now >= *timers_.rto()) {
    on_rto(now, transmit);
  }
  if (!failure_ && timers_.persist() && now >= *timers_.persist()) {
    on_persist(now, transmit);
  }
  if (!failure_) {
    if (const auto due = keepalive_deadline(); due && now >= *due) {
      on_keepalive(now, transmit);
    }
  }
  if (!failure_ && resend_due_ && now >= *resend_due_) {
    // What the device refused goes again unless the pacer holds it back.
    resend_due_.reset();
    if (s.syn_acked() && s.wnd > 0 && !pacer_.release() && send_retransmissions(now, transmit)) {
      segmenter_.send_new_data(path(), now, transmit);
    }
  }
  if (!failure_ && pacer_.release() && now >= *pacer_.release()) {
    // The pacing release: resume sending.
    pacer_.clear_release();
    if (s.syn_acked() && s.wnd > 0 && send_retransmissions(now, transmit)) {
      segmenter_.send_new_data(path(), now, transmit);
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
  consider(timers_.rto());
  consider(rack_tlp_.rack_deadline());
  consider(rack_tlp_.pto_deadline());
  consider(rack_tlp_.recovery_probe_deadline());
  consider(timers_.persist());
  consider(keepalive_deadline());
  consider(pacer_.release());
  consider(resend_due_);
  if (state_.config.user_timeout > Duration::zero() && state_.unacked_since) {
    consider(*state_.unacked_since + state_.config.user_timeout);
  }
  return next;
}

// ---------------------------------------------------------------------------
// Observers

Wrap32 TcpSender::isn() const {
  return state_.isn;
}
Wrap32 TcpSender::next_seqno() const {
  return Wrap32::wrap(state_.snd_nxt, state_.isn);
}
Wrap32 TcpSender::oldest_unacked() const {
  return Wrap32::wrap(state_.snd_una, state_.isn);
}
uint64_t TcpSender::sequence_numbers_in_flight() const {
  return state_.snd_nxt - state_.snd_una;
}
uint32_t TcpSender::consecutive_retransmissions() const {
  return state_.consecutive_retransmissions;
}
bool TcpSender::syn_sent() const {
  return state_.syn_sent;
}
bool TcpSender::syn_acked() const {
  return state_.syn_acked();
}
bool TcpSender::fin_sent() const {
  return state_.fin_sent;
}
bool TcpSender::fin_acked() const {
  return state_.fin_sent && state_.snd_una == state_.snd_nxt;
}
std::optional<SenderFailure> TcpSender::failure() const {
  return failure_;
}
const SenderStats& TcpSender::stats() const {
  return state_.stats;
}

uint64_t TcpSender::writable_bytes() const {
  const SendState& s = state_;
  const uint64_t free = s.outbound.available_capacity();
  if (!s.config.autotune_send_buffer) {
    return free;
  }
  // Only bytes not yet sent count: those sent and unacknowledged (SACKed ones
  // included, which heavy loss keeps around for a while) are bounded by the
  // windows already, and counting them starved the sender of new data at 20%
  // loss.
  const uint64_t limit = std::max(s.config.send_buffer_floor, 2 * s.cc->cwnd());
  const uint64_t unsent = s.pending_bytes();
  return unsent >= limit ? 0 : std::min(free, limit - unsent);
}

SenderState TcpSender::state() const {
  const SendState& st = state_;
  SenderState s;
  s.cwnd = st.cc->cwnd();
  s.ssthresh = st.cc->ssthresh();
  s.bytes_in_flight = st.bytes_in_flight();
  s.srtt = st.rtt.srtt();
  s.rttvar = st.rtt.rttvar();
  s.rto = st.rtt.rto();
  s.in_recovery = recovery_.in_recovery();
  s.tlp_outstanding = rack_tlp_.tlp_outstanding();
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

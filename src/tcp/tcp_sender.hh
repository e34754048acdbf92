#pragma once

// TcpSender: the sending half of a TCP endpoint (RFC 9293 §3.8, RFC 5681,
// RFC 6298, RFC 6675). It owns the outbound ByteStream that the application
// writes to, segments it to the peer's MSS, fills min(peer window, cwnd),
// retransmits on RTO, duplicate ACKs and SACK-detected loss, probes a zero
// window, and gives up after too many retransmissions. Congestion control is a
// pluggable CongestionControl (tcp/congestion/).
//
// It knows nothing of the receive side: TcpConnection completes every segment
// it emits with ackno, window and SACK blocks from the TcpReceiver, decides
// acceptability of incoming segments (RFC 9293 §3.10.7) and hands the sender
// the acknowledgment fields of each acceptable one.
//
// Time comes in as `now`; `next_deadline()` says when `tick()` is next needed.

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "stream/byte_stream.hh"
#include "tcp/congestion/congestion_control.hh"
#include "tcp/option_negotiation.hh"
#include "tcp/rack.hh"
#include "tcp/rtt_estimator.hh"
#include "tcp/sack_scoreboard.hh"
#include "tcp/tcp_config.hh"
#include "tcp/tcp_segment.hh"
#include "tcp/wrap32.hh"
#include "util/counters.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

// How an incoming ACK relates to what was sent (RFC 9293 §3.10.7.4, RFC 5961 §5).
enum class AckResult {
  NoAck,      // the segment carries no ACK flag
  Advanced,   // SND.UNA < SEG.ACK <= SND.NXT: new data acknowledged
  Duplicate,  // SEG.ACK == SND.UNA
  Old,        // SND.UNA - MAX.SND.WND <= SEG.ACK < SND.UNA: ignore the ACK field
  TooOld,     // below that: RFC 5961 drop (connection sends an ACK)
  Unsent,     // SEG.ACK > SND.NXT: acknowledges something not yet sent (send an ACK, drop)
};
constexpr size_t kAckResultCount = 6;
std::string_view to_string(AckResult r);

// Fields of an acceptable ACK that were nonsense and ignored (the rest of the
// ACK is still used). Each is counted in SenderStats::input_errors.
enum class SenderInputError {
  SackBlockInverted,      // left edge not below the right edge
  SackBlockOutOfWindow,   // outside [SEG.ACK, SND.NXT] and not a D-SACK (RFC 2883)
  SackNotNegotiated,      // SACK blocks although SACK was not negotiated
  WindowShrunk,           // right edge moved left (RFC 9293 §3.8.6.2.1: accepted, counted)
  TimestampEchoInFuture,  // TSecr later than any TSval we sent (RFC 7323 §4)
  WindowScaleTooLarge,    // peer's shift > 14, clamped (RFC 7323 §2.3)
  PeerMssTooSmall,        // peer's MSS below 64, raised
  kCount
};
std::string_view to_string(SenderInputError e);

enum class SenderFailure {
  MaxRetransmissions,  // TcpConfig::max_retransmissions consecutive retransmissions
  UserTimeout,         // data unacknowledged for TcpConfig::user_timeout
  KeepaliveTimeout,    // TcpConfig::keepalive_probes keepalive probes unanswered
};
std::string_view to_string(SenderFailure f);

struct SenderStats {
  uint64_t segments_sent = 0;
  uint64_t bytes_sent = 0;  // payload bytes, retransmissions included
  uint64_t retransmitted_segments = 0;
  uint64_t retransmitted_bytes = 0;
  uint64_t fast_retransmits = 0;
  uint64_t rto_expirations = 0;
  uint64_t sack_recovered_segments = 0;  // retransmitted because SACK showed a hole
  uint64_t duplicate_acks = 0;
  uint64_t zero_window_probes = 0;
  uint64_t keepalive_probes = 0;
  uint64_t dsack_blocks = 0;  // RFC 2883 duplicate reports (ignored)
  // Retransmissions cut to leave room for SACK blocks (RFC 6691).
  uint64_t retransmissions_split = 0;
  // Timeouts with the segment at SND.UNA sacked: SACK marks forgotten.
  uint64_t sack_reneging = 0;
  // Zero-window probes taken back when the window opened, sent again at once.
  uint64_t probes_taken_back = 0;
  uint64_t path_mtu_updates = 0;           // MSS lowered by an ICMP frag-needed
  uint64_t black_hole_mss_reductions = 0;  // MSS lowered after repeated timeouts
  // Timestamp echoes of an earlier copy of a retransmitted segment, not used
  // as RTT samples.
  uint64_t ambiguous_rtt_samples = 0;
  // RFC 8985 RACK-TLP.
  uint64_t rack_marked_lost = 0;               // segments RACK marked lost
  uint64_t lost_retransmissions_detected = 0;  // of them, retransmissions
  uint64_t tlp_probes = 0;                     // tail loss probes sent
  uint64_t tlp_recoveries = 0;                 // probes that repaired a loss (§7.4)
  uint64_t recovery_probes = 0;                // TcpConfig::recovery_probes sent
  // Every ACK seen, by classification (index: AckResult).
  std::array<uint64_t, kAckResultCount> acks{};
  EnumCounters<SenderInputError> input_errors;

  uint64_t ack_count(AckResult r) const { return acks[static_cast<size_t>(r)]; }
};

// A snapshot for traces and summaries.
struct SenderState {
  uint64_t cwnd = 0;
  uint64_t ssthresh = 0;
  uint64_t bytes_in_flight = 0;
  Duration srtt{0};
  Duration rttvar{0};
  Duration rto{0};
  bool in_recovery = false;
  bool tlp_outstanding = false;  // an RFC 8985 tail loss probe is unanswered
};

class TcpSender {
 public:
  using Transmit = std::function<void(const TcpSegment&)>;
  // Called on every change of cwnd or of the RTT estimate (for plots).
  using Trace = std::function<void(Instant, const SenderState&)>;

  // `ts_offset` is added to the millisecond clock for TSval (RFC 7323 §5.4,
  // §7.1); nullopt uses the ISN (for tests only: it tells the peer our ISN's
  // hash and our uptime).
  TcpSender(const TcpConfig& config, Wrap32 isn, std::optional<uint32_t> ts_offset = std::nullopt);
  ~TcpSender();
  TcpSender(TcpSender&&) noexcept;
  TcpSender& operator=(TcpSender&&) noexcept;

  // The application writes here. Bytes stay buffered until acknowledged, so
  // available_capacity() is the free send buffer.
  stream::ByteStream& outbound();
  const stream::ByteStream& outbound() const;
  // How many more bytes the application should write now: the free send
  // buffer, or with TcpConfig::autotune_send_buffer no more than brings the
  // bytes not yet sent to max(send_buffer_floor, 2 * cwnd).
  uint64_t writable_bytes() const;

  // Once the handshake has told us the peer's options.
  void set_peer_options(const PeerOptions& options);

  // Sends what may be sent now: the SYN if not yet sent, new data within
  // min(peer window, cwnd) (Nagle permitting), FIN once outbound is closed and
  // drained into segments. Each segment has seqno, SYN/FIN, payload and, when
  // negotiated, TSval set; the caller adds the acknowledgment side.
  void push(Instant now, const Transmit& transmit);

  // Records our SYN as sent without sending it: a SYN cookie's SYN-ACK
  // went out before this connection existed. Counted as a retransmission,
  // so the handshake gives no RTT sample (RFC 6298 §3, Karn: when it was
  // sent is not known).
  void restore_syn(Instant now);
  // Our SYN answers the peer's (it is a SYN-ACK): it gives up after
  // TcpConfig::max_syn_ack_retransmissions, not max_syn_retransmissions.
  void set_passive_open() { passive_open_ = true; }
  // The application closed the connection (TcpConnection::orphan):
  // retransmissions and zero-window probes give up after
  // TcpConfig::max_orphan_retransmissions, answered probes included.
  void set_orphaned() { orphaned_ = true; }

  // The acknowledgment fields of an acceptable incoming segment: ACK flag and
  // ackno, window (raw, scaled here), SACK blocks, timestamp echo.
  AckResult receive(const TcpSegment& segment, Instant now);

  // Fires due timers: RTO (retransmit, back off), RACK reordering timer and
  // tail loss probe (RFC 8985), zero-window probe, keepalive.
  void tick(Instant now, const Transmit& transmit);
  std::optional<Instant> next_deadline() const;

  // A segment with no payload at SND.NXT (for a pure ACK or RST).
  TcpSegment make_empty_segment() const;
  // The same with TSval set when timestamps were negotiated.
  TcpSegment make_empty_segment(Instant now) const;
  // Our RFC 7323 TSval at `now` (millisecond clock with a per-connection offset).
  uint32_t timestamp_value(Instant now) const { return timestamp_clock(ts_offset_, now); }
  // The TSval clock of any connection with offset `offset`.
  static uint32_t timestamp_clock(uint32_t offset, Instant now);
  uint32_t timestamp_offset() const { return ts_offset_; }

  Wrap32 isn() const;
  Wrap32 next_seqno() const;      // SND.NXT
  Wrap32 oldest_unacked() const;  // SND.UNA
  uint64_t sequence_numbers_in_flight() const;
  uint32_t consecutive_retransmissions() const;
  bool syn_sent() const;
  bool syn_acked() const;
  bool fin_sent() const;
  bool fin_acked() const;
  std::optional<SenderFailure> failure() const;

  const SenderStats& stats() const;
  SenderState state() const;
  void set_trace(Trace trace);

  // Payload bytes per segment: min(peer MSS, our MSS) less timestamp option
  // bytes (the SMSS of congestion control).
  uint32_t max_payload() const { return smss_; }
  // Option bytes the receiver's SACK blocks will add to our next segments
  // (TcpReceiver::sack_option_bytes); new segments leave room for them.
  void set_sack_option_bytes(uint32_t bytes) { sack_option_bytes_ = bytes; }
  // Payload of a full-sized new segment now: max_payload() less the SACK
  // option bytes.
  uint32_t new_segment_payload() const;
  // Bytes for payload and options together in one segment: min(our MSS,
  // the peer's MSS) (RFC 6691).
  uint32_t segment_room() const {
    return std::min<uint32_t>({config_.mss, peer_.mss, path_mss_.value_or(0xffff)});
  }
  // RFC 1191: the path carries IPv4 datagrams of at most `mtu` bytes (an
  // ICMP fragmentation-needed whose quote checked out). Lowers the MSS; what
  // is in flight and no longer fits is marked lost and goes again, cut to
  // size, with no congestion response. False if nothing changed.
  bool on_path_mtu(uint32_t mtu);
  // RFC 5927 §4.1: `seqno` is in [SND.UNA, SND.NXT), so an ICMP error
  // quoting it is about data we have in flight.
  bool in_flight(Wrap32 seqno) const;
  bool in_recovery() const { return in_recovery_; }
  // RFC 6675 pipe: bytes presumed in the network.
  uint64_t bytes_in_flight() const;
  // TCP_NODELAY at run time.
  void set_nagle(bool on) { config_.nagle = on; }
  const CongestionControl& congestion_control() const { return *cc_; }
  // What the handshake settled (after set_peer_options's clamping).
  const PeerOptions& peer_options() const { return peer_; }
  // Replaces the algorithm made from TcpConfig::congestion_control (custom
  // algorithms, tests). Before the first data segment.
  void set_congestion_control(std::unique_ptr<CongestionControl> cc);
  // Set when TcpConfig::congestion_control was not understood (Reno is used).
  const std::optional<std::string>& congestion_control_error() const { return cc_error_; }

 private:
  void send_syn(Instant now, const Transmit& transmit);
  void send_new_data(Instant now, const Transmit& transmit);
  bool send_retransmissions(Instant now, const Transmit& transmit);
  void transmit_range(uint64_t start, uint32_t length, bool syn, bool fin, Instant now,
                      const Transmit& transmit);
  void retransmit(size_t index, Instant now, const Transmit& transmit);
  void on_rto(Instant now, const Transmit& transmit);
  void on_persist(Instant now, const Transmit& transmit);
  void take_back_probe();
  // RFC 2883 §4: the first of `count` SACK blocks lies inside the second.
  static bool inside_second_block(const TcpSegment& segment, size_t count, const SackBlock& first);
  void update_smss();
  bool lower_path_mss(uint32_t mss);
  void detect_black_hole();
  void on_keepalive(Instant now, const Transmit& transmit);
  void process_sack(const TcpSegment& segment, uint64_t ack, uint64_t& newly_sacked);
  void enter_recovery(Instant now);
  void arm_rto(Instant now);
  void restart_timers_after_ack(Instant now);
  void maybe_arm_persist(Instant now);
  std::optional<Instant> keepalive_deadline() const;
  void fail(SenderFailure why);
  void maybe_trace(Instant now);
  uint64_t pending_bytes() const;
  bool segment_window_full() const;  // CongestionControl::max_segments_in_flight()  // written by
                                     // the app, not yet sent once
  uint64_t fin_seqno() const { return 1 + outbound_.bytes_pushed(); }

  // RFC 8985 RACK-TLP (the detection itself is in Rack).
  bool rack_on() const { return config_.rack && peer_.sack; }
  Instant rack_ambiguous_after(const TcpSegment& segment, Instant now) const;
  void rack_on_ack(bool dsack, Instant now);
  void rack_detect(Instant now);
  void on_rack_timer(Instant now, const Transmit& transmit);
  bool tlp_allowed() const;
  void schedule_tlp(Instant now);
  void on_pto(Instant now, const Transmit& transmit);
  bool send_probe_new_data(Instant now, const Transmit& transmit);
  bool tlp_on_ack(uint64_t ack, bool duplicate, bool sacks, bool dsack, uint64_t prior_flight,
                  const AckEvent& event);
  void end_tlp_episode();
  // TcpConfig::recovery_probes.
  bool recovery_probe_allowed() const;
  void schedule_recovery_probe(Instant now);
  void on_recovery_probe(Instant now, const Transmit& transmit);

  // Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation).
  void stamp_rate(OutstandingSegment& seg, bool pipe_was_empty, Instant now);
  std::optional<RateSample> make_rate_sample(Instant now, uint64_t newly_lost);
  void check_app_limited();
  // Pacing at CongestionControl::pacing_rate().
  bool pacing_allows(uint64_t bytes, Instant now);
  void pacing_on_sent(uint64_t bytes, Instant now);

  TcpConfig config_;
  Wrap32 isn_;
  stream::ByteStream outbound_;
  std::unique_ptr<CongestionControl> cc_;
  std::optional<std::string> cc_error_;
  RttEstimator rtt_;
  SackScoreboard board_;
  PeerOptions peer_;
  uint32_t smss_;
  uint32_t sack_option_bytes_ = 0;
  uint32_t ts_offset_;

  uint64_t snd_una_ = 0;  // absolute: 0 is the SYN
  uint64_t snd_nxt_ = 0;
  uint64_t wnd_ = 0;  // peer's window in bytes, scaled
  uint64_t max_wnd_ = 0;
  bool wnd_set_ = false;
  Wrap32 wl1_;
  Wrap32 wl2_;
  bool syn_sent_ = false;
  bool fin_sent_ = false;
  bool syn_timed_out_ = false;
  bool passive_open_ = false;
  bool orphaned_ = false;
  // Where the zero-window probe of new data outstanding now starts.
  std::optional<uint64_t> probe_start_;
  // The MSS the path allows (its MTU less 40), once something told us.
  std::optional<uint32_t> path_mss_;

  // Loss recovery (RFC 5681 §3.2, RFC 6582, RFC 6675).
  bool in_recovery_ = false;
  uint64_t recover_ = 0;
  uint32_t dupacks_ = 0;
  uint64_t reno_dup_bytes_ = 0;          // without SACK: bytes that duplicate ACKs say have left
  uint64_t limited_transmit_bytes_ = 0;  // sent by RFC 3042 limited transmit
  bool retransmit_now_ = false;          // the next retransmission ignores cwnd
  bool cwnd_limited_ = false;            // push() stopped at cwnd since the last ACK
  uint64_t delivered_ = 0;

  // RFC 8985 RACK-TLP.
  Rack rack_;
  std::optional<Instant> pto_deadline_;
  std::optional<uint64_t> tlp_end_seq_;  // TLP.end_seq: SND.NXT when the probe went out
  bool tlp_is_retrans_ = false;          // TLP.is_retrans
  std::optional<Instant> recovery_probe_deadline_;
  uint32_t recovery_probes_out_ = 0;  // sent since the last ACK that made progress

  // Delivery-rate sampling: C.delivered_time, C.first_sent_time and
  // C.app_limited of draft-cheng §3.1 (0: not app-limited; else the
  // delivered count at which the app-limited stretch ends).
  bool rate_sampling_ = false;  // CongestionControl::wants_rate_samples()
  Instant delivered_time_;
  Instant first_sent_time_;
  uint64_t app_limited_until_ = 0;

  // Pacing: the paced stream's clock (it may run up to one burst ahead of
  // now) and when send_new_data() stopped for it.
  Instant pace_next_;
  std::optional<Instant> pacing_release_;

  // Timers.
  std::optional<Instant> rto_deadline_;
  std::optional<Instant> persist_deadline_;
  Duration persist_interval_{0};
  uint32_t persist_probes_out_ = 0;  // unanswered zero-window probes
  std::optional<Instant> unacked_since_;
  std::optional<Instant> last_sent_;  // last segment with sequence space (Linux's lsndtime)
  Instant last_heard_;
  uint32_t keepalive_probes_out_ = 0;
  Instant last_keepalive_;
  uint32_t consecutive_retransmissions_ = 0;
  std::optional<SenderFailure> failure_;

  SenderStats stats_;
  Trace trace_;
  SenderState traced_;
  std::string scratch_;  // payload of a segment that crosses the ring's wrap point
};

}  // namespace tinytcp::tcp

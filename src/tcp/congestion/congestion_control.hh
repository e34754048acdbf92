#pragma once

// CongestionControl: the one interface between TcpSender and a congestion
// control algorithm (ARCHITECTURE.md principle 6). The sender does the loss
// detection and recovery bookkeeping (SACK scoreboard, pipe, RFC 6582 recover
// point) and tells the algorithm what happened through the events below; the
// algorithm answers with cwnd (and ssthresh for reports). The sender sends
// while pipe < cwnd and within the peer's window: usable = min(rwnd, cwnd).
//
// Algorithms are separate classes (Reno, NewReno, Cubic, Bbr, FixedWindow)
// made by make_congestion_control(). The events carry enough for a
// model-based algorithm: delivered bytes, a delivery-rate sample, RTT samples,
// bytes in flight; such an algorithm answers with a pacing rate the sender
// honours.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/expected.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

// What an algorithm needs at construction.
struct CongestionParams {
  uint32_t smss = 536;                    // sender maximum segment size (payload bytes)
  uint32_t initial_window_segments = 10;  // RFC 6928
};

// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3),
// built by the sender for each ACK that delivers data: how fast the network
// delivered the flight that ended with the newest segment this ACK covers.
struct RateSample {
  uint64_t delivered = 0;        // bytes delivered over `interval`
  uint64_t prior_delivered = 0;  // delivered_total when that newest segment was sent
  Duration interval{0};          // max(send_elapsed, ack_elapsed)
  Duration send_elapsed{0};      // between the flight's first and last transmission
  Duration ack_elapsed{0};       // between the deliveries bracketing the flight
  // Bytes per second; nullopt when the interval is shorter than the min RTT
  // (ACK compression or a spurious retransmission: not a rate to trust, §3.3).
  std::optional<uint64_t> delivery_rate;
  std::optional<Duration> rtt;  // now - last transmission of the newest segment
  bool is_app_limited = false;  // the flight was limited by the application, not cwnd
  uint64_t newly_lost = 0;      // bytes this ACK newly marked lost (RFC 6675 IsLost)
};

// One ACK that acknowledged or SACKed new data.
struct AckEvent {
  Instant now;
  uint64_t bytes_acked = 0;      // newly cumulatively acknowledged
  uint64_t bytes_sacked = 0;     // newly selectively acknowledged
  uint64_t delivered_total = 0;  // all bytes delivered so far (acked + SACKed)
  uint64_t prior_in_flight = 0;  // pipe before this ACK
  uint64_t in_flight = 0;        // pipe after it
  std::optional<Duration> rtt;   // an RTT sample taken from this ACK
  Duration min_rtt{0};           // smallest RTT seen (0: none yet)
  Duration srtt{0};              // smoothed RTT (0: none yet)
  bool cwnd_limited = true;      // was the sender limited by cwnd (RFC 7661)?
  // Set when the algorithm wants_rate_samples() and this ACK delivered data
  // (every ACK or SACK of new data).
  std::optional<RateSample> rate;
};

// A congestion signal: loss detected by duplicate ACKs or SACK (fast
// retransmit), or a retransmission timeout.
struct LossEvent {
  Instant now;
  uint64_t flight_size = 0;  // RFC 5681 FlightSize: bytes sent and not yet acknowledged
  uint64_t in_flight = 0;    // RFC 6675 pipe
  bool repeated = false;     // a further timeout of the same segment (RFC 5681 §3.1)
};

// New data leaves with nothing outstanding (Linux's CA_EVENT_TX_START): the
// application gave the sender nothing to send for `idle`. Reported just
// before that segment goes out; it is at most one SMSS, which any restart
// window holds, so cwnd may shrink here without the sender checking again.
struct TransmitStartEvent {
  Instant now;
  Duration idle{0};  // since the last segment that carried sequence space left
  Duration rto{0};   // the retransmission timeout now (RFC 6298)
  // TcpConfig::slow_start_after_idle: restart the window after an idle
  // period longer than the RTO (RFC 5681 §4.1).
  bool restart_after_idle = true;
};

// RFC 5681 §4.1 restart after idle, with the decay of RFC 2861 §3 that Linux
// keeps (tcp_cwnd_restart): after an idle period longer than the RTO, cwnd is
// halved once for each further RTO that passed, and never below the restart
// window RW = min(IW, cwnd); ssthresh first rises to at least 3/4 of cwnd,
// so slow start climbs back towards the old window in a few round trips.
// RFC 5681's own rule drops straight to RW after any idle period over one
// RTO. We follow Linux: it is the deployed behaviour (and what our
// benchmarks compare against), and a window idle for little more than one
// RTO is mostly still valid: the decay discards it in proportion to how
// stale it is, and once log2(cwnd / RW) further RTOs have passed the two
// rules agree (RW).
// Returns the window after the idle period (unchanged when `idle` <= `rto`);
// algorithms call it from on_transmit_start(). Units are the caller's (bytes
// or segments), as long as cwnd and iw share them.
double window_after_idle(double cwnd, double iw, Duration idle, Duration rto);

// How an algorithm wants a partial ACK during cumulative-ACK (non-SACK) fast
// recovery handled.
enum class PartialAckResponse {
  ExitRecovery,           // RFC 5681 Reno: deflate to ssthresh and leave recovery
  RetransmitNextUnacked,  // RFC 6582 NewReno: retransmit the next hole, stay
};

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;

  virtual std::string_view name() const = 0;

  // The sender's MSS changed (the handshake settled it). Before any data has
  // been acknowledged the initial window is recomputed from it.
  virtual void set_mss(uint32_t smss) = 0;

  // A segment carrying `bytes` of sequence space left (first transmission or
  // retransmission); `in_flight` includes it.
  virtual void on_packet_sent(Instant now, uint64_t bytes, uint64_t in_flight) {
    (void)now;
    (void)bytes;
    (void)in_flight;
  }

  // Whether the algorithm needs AckEvent::rate. Only then does the sender
  // stamp every transmission and build the samples (draft-cheng), so the
  // loss-based algorithms pay nothing for them.
  virtual bool wants_rate_samples() const { return false; }

  // Every ACK that delivered data (cumulatively or by SACK), inside loss
  // recovery or not, before any other event the sender reports for it. For
  // model-based algorithms, which learn from every delivery; the loss-based
  // ones ignore it.
  virtual void on_delivery(const AckEvent& ack) { (void)ack; }

  // New data acknowledged outside loss recovery: grow the window.
  virtual void on_ack(const AckEvent& ack) = 0;

  // Entering fast recovery (RFC 5681 §3.2, RFC 6675 §5 step 4): reduce.
  virtual void on_congestion_event(const LossEvent& loss) = 0;

  // A partial ACK inside recovery: one that advances SND.UNA but not past the
  // recovery point (RFC 6582 §3.2 step 3). With SACK the RFC 6675 scoreboard
  // drives recovery and the answer is not used.
  virtual PartialAckResponse on_partial_ack(const AckEvent& ack) = 0;

  // A full ACK ended recovery (RFC 6582 §3.2 step 3, RFC 6675 §5).
  virtual void on_recovery_exit(const AckEvent& ack) = 0;

  // The retransmission timer expired (RFC 5681 §3.1 equation 4, loss window).
  virtual void on_rto(const LossEvent& loss) = 0;

  // New data leaves with nothing outstanding (see TransmitStartEvent). The
  // loss-based algorithms restart the window after a long idle period
  // (RFC 5681 §4.1) and CUBIC leaves the idle time out of its epoch (RFC 9438
  // §5.8); model-based ones watch on_packet_sent() instead.
  virtual void on_transmit_start(const TransmitStartEvent& event) { (void)event; }

  virtual uint64_t cwnd() const = 0;
  virtual uint64_t ssthresh() const = 0;

  // A window counted in segments as well as bytes, for algorithms defined
  // that way (FixedWindow: stop-and-wait must hold one segment, however
  // small). nullopt: bytes only.
  virtual std::optional<uint64_t> max_segments_in_flight() const { return std::nullopt; }

  // Bytes per second at which to pace, for model-based algorithms: the
  // sender then spaces segments at this rate, in bursts of at most
  // max(2 segments, 1 ms at the rate). nullopt: no pacing (send as the window allows).
  virtual std::optional<uint64_t> pacing_rate() const { return std::nullopt; }
};

// Every spec make_congestion_control() accepts, for help texts ("fixed:N":
// any N in range).
inline constexpr std::string_view kCongestionControlSpecs = "reno|newreno|cubic|bbr|fixed:N";

// Makes an algorithm from a spec: "reno", "newreno", "cubic", "bbr" or
// "fixed:N" (N segments, 1 <= N <= 1'000'000). The error is a message an app can print.
Expected<std::unique_ptr<CongestionControl>, std::string> make_congestion_control(
    std::string_view spec, const CongestionParams& params);

}  // namespace tinytcp::tcp

#pragma once

// SenderTimers: the three timers of a TcpSender and their backoff. The
// retransmission timer (RFC 6298, with TcpConfig::syn_rto for the SYN), the
// persist timer that probes a zero window (RFC 9293 §3.8.6.1, backing off
// as RFC 1122 §4.2.2.17 asks), and the keepalive timer of an idle
// connection (RFC 1122 §4.2.3.6). The RTO and the persist timer take turns:
// the RTO is not armed while the window is being probed.
//
// It keeps deadlines and probe counts; the TcpSender acts when they fire.

#include <algorithm>
#include <cstdint>
#include <optional>

#include "tcp/send_state.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class SenderTimers {
 public:
  // Retransmission timer.
  const std::optional<Instant>& rto() const { return rto_; }
  void set_rto(Instant at) { rto_ = at; }
  void cancel_rto() { rto_.reset(); }
  // RFC 6298 §5.1: armed when something is sent, unless it runs already
  // (or the window is being probed). Before the handshake completes the
  // SYN's own timer (TcpConfig::syn_rto * 2^n, capped by the RTO) is used.
  void arm_rto(const SendState& s, Instant now);
  // An ACK of new data: RFC 6298 §5.2 (nothing outstanding: stop) and §5.3
  // (restart); outstanding data beyond a zero window is probed instead.
  void restart_after_ack(SendState& s, Instant now) {
    if (s.board.empty()) {
      rto_.reset();  // RFC 6298 §5.2
      s.unacked_since.reset();
      return;
    }
    s.unacked_since = now;
    if (s.wnd == 0) {
      // Outstanding data beyond a zero window is repaired by probing.
      rto_.reset();
      if (!persist_) {
        persist_interval_ = s.rtt.rto();
        persist_ = now + persist_interval_;
      }
      return;
    }
    rto_ = now + s.rtt.rto();  // RFC 6298 §5.3
  }

  // Persist timer.
  const std::optional<Instant>& persist() const { return persist_; }
  void cancel_persist() { persist_.reset(); }
  // RFC 9293 §3.8.6.1: a zero window with something to send and nothing in
  // flight is probed on a timer, or the window update could be lost forever.
  void arm_persist_if_stalled(const SendState& s, Instant now);
  // The peer's window opened: probing ends and the RTO takes over.
  void on_window_open(const SendState& s, Instant now) {
    persist_probes_out_ = 0;  // an orphan's count ends when the window opens
    if (persist_) {
      persist_.reset();
      if (!s.board.empty()) {
        rto_ = now + s.rtt.rto();
      }
    }
  }
  // Unanswered zero-window probes.
  uint32_t persist_probes_out() const { return persist_probes_out_; }
  void reset_persist_probes() { persist_probes_out_ = 0; }
  // A zero-window probe went out: the next one after twice the interval.
  void on_persist_probe(const SendState& s, Instant now);

  // Keepalive timer.
  // Anything arrived from the peer.
  void on_heard(Instant now) {
    last_heard_ = now;
    keepalive_probes_out_ = 0;
  }
  // When the next keepalive probe is due: only with TcpConfig::keepalive,
  // synchronized and nothing outstanding.
  std::optional<Instant> keepalive(const SendState& s) const {
    if (!s.config.keepalive || !s.syn_acked() || !s.board.empty()) {
      return std::nullopt;
    }
    if (keepalive_probes_out_ == 0) {
      return std::max(last_heard_, last_keepalive_) + s.config.keepalive_idle;
    }
    return last_keepalive_ + s.config.keepalive_interval;
  }
  uint32_t keepalive_probes_out() const { return keepalive_probes_out_; }
  void on_keepalive_probe(Instant now) {
    ++keepalive_probes_out_;
    last_keepalive_ = now;
  }

  // The sender gave up: nothing is retransmitted or probed any more.
  void stop() {
    rto_.reset();
    persist_.reset();
  }

 private:
  std::optional<Instant> rto_;
  std::optional<Instant> persist_;
  Duration persist_interval_{0};
  uint32_t persist_probes_out_ = 0;
  Instant last_heard_;
  uint32_t keepalive_probes_out_ = 0;
  Instant last_keepalive_;
};

}  // namespace tinytcp::tcp

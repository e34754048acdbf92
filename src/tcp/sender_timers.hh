#pragma once

// SenderTimers: the three timers of a TcpSender and their backoff. The
// retransmission timer (RFC 6298, with TcpConfig::syn_rto for the SYN), the
// persist timer that probes a zero window (RFC 9293 §3.8.6.1, backing off
// as RFC 1122 §4.2.2.17 asks), and the keepalive timer of an idle
// connection (RFC 1122 §4.2.3.6).
//
// They are exclusive, and the type says so: one slot holds the RTO, the
// persist timer, or neither (Idle). Only an idle connection with nothing
// outstanding and nothing waiting to be sent keeps alive; a shut window
// with data waiting is probed by the persist timer instead (RACK, TLP and
// pacing deadlines are the TcpSender's, beside these).
//
// It keeps deadlines and probe counts; the TcpSender acts when they fire.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <variant>

#include "tcp/send_state.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class SenderTimers {
 public:
  // Retransmission timer.
  std::optional<Instant> rto() const {
    const auto* t = std::get_if<Retransmission>(&slot_);
    return t != nullptr ? std::optional<Instant>(t->at) : std::nullopt;
  }
  // Arms the RTO at `at`, in place of whatever the slot held.
  void set_rto(Instant at) { slot_ = Retransmission{at}; }
  void cancel_rto() {
    if (std::holds_alternative<Retransmission>(slot_)) {
      slot_ = Idle{};
    }
  }
  // RFC 6298 §5.1: armed when something is sent, unless it runs already
  // (or the window is being probed). Before the handshake completes the
  // SYN's own timer (TcpConfig::syn_rto * 2^n, capped by the RTO) is used.
  void arm_rto(const SendState& s, Instant now);
  // An ACK of new data: RFC 6298 §5.2 (nothing outstanding: stop) and §5.3
  // (restart); outstanding data beyond a zero window is probed instead.
  void restart_after_ack(SendState& s, Instant now);

  // Persist timer.
  std::optional<Instant> persist() const {
    const auto* t = std::get_if<Persist>(&slot_);
    return t != nullptr ? std::optional<Instant>(t->at) : std::nullopt;
  }
  void cancel_persist() {
    if (std::holds_alternative<Persist>(slot_)) {
      slot_ = Idle{};
    }
  }
  // RFC 9293 §3.8.6.1: a zero window with something to send and nothing in
  // flight is probed on a timer, or the window update could be lost forever.
  void arm_persist_if_stalled(const SendState& s, Instant now);
  // The peer's window opened: probing ends and the RTO takes over.
  void on_window_open(const SendState& s, Instant now);
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
  // synchronized, the slot idle and nothing outstanding or waiting.
  std::optional<Instant> keepalive(const SendState& s) const;
  uint32_t keepalive_probes_out() const { return keepalive_probes_out_; }
  void on_keepalive_probe(Instant now) {
    ++keepalive_probes_out_;
    last_keepalive_ = now;
  }

  // The sender gave up: nothing is retransmitted or probed any more.
  void stop() { slot_ = Idle{}; }

 private:
  struct Idle {};
  struct Retransmission {
    Instant at;
  };
  struct Persist {
    Instant at;
  };
  std::variant<Idle, Retransmission, Persist> slot_;
  // The probe interval, backed off after every probe (kept while a probe's
  // own RTO holds the slot).
  Duration persist_interval_{0};

  uint32_t persist_probes_out_ = 0;
  Instant last_heard_;
  uint32_t keepalive_probes_out_ = 0;
  Instant last_keepalive_;
};

}  // namespace tinytcp::tcp

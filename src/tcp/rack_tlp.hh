#pragma once

// RackTlp: RFC 8985 RACK-TLP for a TcpSender, and the recovery probes that
// extend it (TcpConfig::recovery_probes). It feeds each ACK to Rack, which
// marks lost what was sent well before something delivered (§6), runs the
// reordering timer (§6.3), and arms and sends the tail loss probe (§7) and
// the recovery probe, each only where it is allowed. A probe that repaired
// a loss gets one congestion response (§7.4).
//
// On only with SACK and TcpConfig::rack. Sending goes through the
// Segmenter; a recovery it starts is LossRecovery's.

#include <cstdint>
#include <optional>

#include "tcp/congestion/congestion_control.hh"
#include "tcp/loss_recovery.hh"
#include "tcp/rack.hh"
#include "tcp/recovery_probe.hh"
#include "tcp/segmenter.hh"
#include "tcp/send_state.hh"
#include "tcp/sender_timers.hh"
#include "tcp/tail_loss_probe.hh"
#include "tcp/tcp_segment.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class RackTlp {
 public:
  using Transmit = Segmenter::Transmit;

  static bool on(const SendState& s) { return s.config.rack && s.peer.sack; }
  Rack& rack() { return rack_; }
  // An RFC 8985 tail loss probe is unanswered.
  bool tlp_outstanding() const { return tlp_.outstanding(); }
  // The reordering timer, the PTO and the recovery probe.
  std::optional<Instant> rack_deadline() const { return rack_.deadline(); }
  std::optional<Instant> pto_deadline() const { return tlp_.deadline(); }
  std::optional<Instant> recovery_probe_deadline() const { return recovery_probe_.deadline(); }

  // §6.2 step 2: segments sent after this bound and delivered by the ACK
  // `segment` may be retransmissions mistaken for their originals.
  Instant ambiguous_after(const SendState& s, const TcpSegment& segment, Instant now) const;
  // §6.2: an ACK updated the scoreboard's delivery record.
  void on_ack(SendState& s, const LossRecovery& recovery, bool dsack, Instant now) {
    Rack::AckInfo info;
    info.now = now;
    info.delivered = &s.board.delivery();
    info.dsack = dsack;
    info.snd_una = s.snd_una;
    info.snd_nxt = s.snd_nxt;
    rack_.on_ack(info);
    detect(s, recovery, now);
  }
  // §7.4 for an ACK of `ack`: true when a probe repaired a loss and got its
  // congestion response.
  bool on_probe_ack(SendState& s, LossRecovery& recovery, uint64_t ack, bool duplicate, bool sacks,
                    bool dsack, uint64_t prior_flight, const AckEvent& event) {
    return tlp_.answered_by(ack) &&
           on_probe_answer(s, recovery, ack, duplicate, sacks, dsack, prior_flight, event);
  }
  // The end of an ACK's processing: probes restart after progress and are
  // cancelled where no longer allowed.
  void after_ack(const SendState& s, const LossRecovery& recovery, const SenderTimers& timers,
                 bool advanced, bool sacked, Instant now) {
    if (advanced) {
      schedule_tlp(s, recovery, timers, now);  // §7.2: restarted by an ACK of new data
    } else if (tlp_.deadline() && !tlp_allowed(s, recovery, timers)) {
      tlp_.cancel();
    }
    if (advanced || sacked) {
      recovery_probe_.reset_backoff();
      schedule_recovery_probe(s, recovery, timers, now);
    } else if (recovery_probe_.deadline() && !recovery_probe_allowed(s, recovery, timers)) {
      recovery_probe_.cancel();
    }
  }
  // After push(): new data restarts the PTO (§7.2); a recovery probe is
  // armed if none is.
  void after_send(const SendState& s, const LossRecovery& recovery, const SenderTimers& timers,
                  bool sent_new, Instant now) {
    if (sent_new) {
      schedule_tlp(s, recovery, timers, now);
    }
    if (!recovery_probe_.deadline()) {
      schedule_recovery_probe(s, recovery, timers, now);
    }
  }
  // A recovery started: its reduction answers for a probe's loss too.
  void on_recovery_start() { tlp_.end_episode(); }
  // A retransmission timeout takes over from every probe and timer here.
  void on_timeout();
  // Fires the reordering timer, the PTO and the recovery probe when due.
  void on_tick(const SendPath& p, Segmenter& segmenter, Instant now, const Transmit& transmit);

 private:
  bool on_probe_answer(SendState& s, LossRecovery& recovery, uint64_t ack, bool duplicate,
                       bool sacks, bool dsack, uint64_t prior_flight, const AckEvent& event);
  void detect(SendState& s, const LossRecovery& recovery, Instant now);
  bool tlp_allowed(const SendState& s, const LossRecovery& recovery,
                   const SenderTimers& timers) const;
  void schedule_tlp(const SendState& s, const LossRecovery& recovery, const SenderTimers& timers,
                    Instant now);
  void on_pto(const SendPath& p, Segmenter& segmenter, Instant now, const Transmit& transmit);
  bool recovery_probe_allowed(const SendState& s, const LossRecovery& recovery,
                              const SenderTimers& timers) const;
  // The round trip a recovery probe waits twice for.
  Duration probe_rtt(const SendState& s) const;
  void schedule_recovery_probe(const SendState& s, const LossRecovery& recovery,
                               const SenderTimers& timers, Instant now);
  void on_recovery_probe(const SendPath& p, Segmenter& segmenter, Instant now,
                         const Transmit& transmit);

  Rack rack_;
  TailLossProbe tlp_;
  RecoveryProbe recovery_probe_;
};

}  // namespace tinytcp::tcp

#pragma once

// Segmenter: turns the outbound stream into segments. It sends the SYN,
// new data within min(peer window, cwnd) in segments of the current MSS
// with Nagle (RFC 896) and sender silly window avoidance (RFC 9293
// §3.8.6.2.1), the FIN with the last data or alone, the retransmissions the
// scoreboard marks lost (cut to fit when the receiver's SACK blocks grew),
// the one new segment of a tail loss probe, and zero-window probes. Each
// segment is recorded on the scoreboard, stamped for rate sampling, paced,
// and starts the retransmission timer.
//
// It decides how much goes and builds the segments; what is lost and when
// to probe is decided by LossRecovery, the timers and the TcpSender.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "tcp/loss_recovery.hh"
#include "tcp/pacer.hh"
#include "tcp/rate_sampler.hh"
#include "tcp/send_state.hh"
#include "tcp/sender_timers.hh"
#include "tcp/tcp_segment.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

// The parts of a TcpSender that sending touches, for one call.
struct SendPath {
  SendState& s;
  LossRecovery& recovery;
  RateSampler& rate;
  Pacer& pacer;
  SenderTimers& timers;
};

class Segmenter {
 public:
  using Transmit = std::function<void(const TcpSegment&)>;

  // Room for a segment's payload copied out of the stream's ring.
  void reserve(uint32_t smss) { scratch_.reserve(smss); }

  void send_syn(const SendPath& p, Instant now, const Transmit& transmit);
  // New data (and the FIN) while both windows, Nagle, sender SWS avoidance
  // and pacing allow.
  void send_new_data(const SendPath& p, Instant now, const Transmit& transmit);
  // RFC 6675 §5 (C): the segments marked lost, while cwnd - pipe >= 1 SMSS
  // (the first one of a recovery regardless). False when cwnd stopped them:
  // no new data either then.
  bool send_retransmissions(const SendPath& p, Instant now, const Transmit& transmit);
  // The scoreboard's segment `index` again.
  void retransmit(const SendPath& p, size_t index, Instant now, const Transmit& transmit);
  // RFC 8985 §7.3: one new segment if there is one and the peer's window
  // takes it; cwnd is not consulted. False if there was none.
  bool send_probe_new_data(const SendPath& p, Instant now, const Transmit& transmit);
  // A zero-window probe: the first outstanding segment again, else one
  // octet of new data (RFC 9293 §3.8.6.1), else the FIN. False if there is
  // nothing to probe with.
  bool send_zero_window_probe(SendState& s, Instant now, const Transmit& transmit);
  // The window opened with nothing but our zero-window probe outstanding,
  // not acknowledged (the receiver dropped it): forget the probe, as if it
  // had never been sent, so the data goes out at once. False if there is
  // no such probe; otherwise the caller stops the RTO.
  bool take_back_zero_window_probe(SendState& s);

 private:
  // Builds the segment of sequence space [start, start + length) from the
  // stream, sends it and counts it.
  void transmit_range(SendState& s, uint64_t start, uint32_t length, bool syn, bool fin,
                      Instant now, const Transmit& transmit);

  std::string scratch_;  // payload of a segment that crosses the ring's wrap point
};

}  // namespace tinytcp::tcp

#pragma once

// ReceiveBufferTuner: receive-window autotuning for TcpReceiver, after
// Linux's dynamic right-sizing (tcp_rcv_space_adjust, tcp_rcv_rtt_measure).
// A fixed window caps a connection at window / RTT (1 MiB over 100 ms is
// 84 Mbit/s); this lets the window follow what the application actually
// consumes. Once per round trip it compares the bytes the application read
// in the last round trip with the round before: while that grows, the
// buffer becomes about twice the bytes per round trip plus a cushion, more
// while the rate is still doubling (the window we advertise now is used a
// round trip later), never more than the maximum and never less than before.
//
// The round trip is the receiver's own estimate (there may be no data of
// ours to time): the echo of our timestamps in the peer's data (RFC 7323
// §4.3, smoothed), and the time the peer takes to fill a window we
// advertised (which only lowers the estimate: a sender that is not window
// limited takes longer).
//
// It only sizes the buffer; TcpReceiver advertises it (never moving the
// right edge left, RFC 9293 §3.8.6.2.2) and owns the memory.

#include <cstdint>
#include <optional>

#include "util/time.hh"

namespace tinytcp::tcp {

class ReceiveBufferTuner {
 public:
  // `initial` bytes of buffer growing up to `max` (no growth if max <=
  // initial); `mss` is the largest segment we announced.
  ReceiveBufferTuner(uint64_t initial, uint64_t max, uint64_t mss);

  // The buffer the window may use now.
  uint64_t buffer_bytes() const { return buffer_; }
  uint64_t max_bytes() const { return max_; }
  // The receiver's round-trip estimate, once there is a sample.
  std::optional<Duration> rtt() const;
  uint64_t grows() const { return grows_; }

  // A timestamp echo: `tsval_now` is our TSval clock now, `tsecr` the peer's
  // echo on a data segment of `length` bytes (timed only when at least
  // `rcv_mss`, and once per echo, as Linux's tcp_rcv_rtt_measure_ts).
  void on_timestamp_echo(uint32_t tsval_now, uint32_t tsecr, uint64_t length, uint64_t rcv_mss);
  // Data arrived: RCV.NXT is `rcv_nxt` and the right edge we last advertised
  // `edge` (stream indexes). Times how long the peer takes to fill a window.
  void on_data(uint64_t rcv_nxt, uint64_t edge, Instant now);
  // The application has consumed `consumed` bytes in all: once a round trip
  // has passed since the last measurement, grow the buffer if it read more
  // than in the round trip before.
  void on_consumed(uint64_t consumed, Instant now);

 private:
  // Linux's tcp_rcv_rtt_update: a sample of the timestamp echo is smoothed
  // (gain 1/8); one that depends on the window only lowers the estimate.
  void add_rtt_sample(Duration sample, bool window_dependent);

  uint64_t buffer_;
  uint64_t max_;
  uint64_t mss_;
  uint64_t grows_ = 0;

  Duration rtt_{0};  // 0: no sample yet
  // Timing a window: when RCV.NXT reaches window_seq_, window_time_ is one
  // round trip (or more) ago.
  std::optional<Instant> window_time_;
  uint64_t window_seq_ = 0;
  std::optional<uint32_t> last_tsecr_;

  // Bytes consumed in the last measured round trip, and where and when the
  // current measurement started.
  uint64_t space_;
  uint64_t space_seq_ = 0;
  std::optional<Instant> space_time_;
};

}  // namespace tinytcp::tcp

#pragma once

// PerfChannel: one tt-perf connection as its workload sees it: bytes queued
// to send (the header first), a callback for the bytes that arrive, and
// step() to move both without blocking. It sends the header of `mode`
// itself. When the connection ends (peer closed, error) `ended()` says how.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/perf_header.hh"
#include "common/stream_end.hh"

namespace tinytcp::apps {

class PerfChannel {
 public:
  using OnInput = std::function<void(std::string_view)>;

  PerfChannel(std::unique_ptr<StreamEnd> stream, const PerfHeader& header, OnInput on_input);
  ~PerfChannel();
  PerfChannel(const PerfChannel&) = delete;
  PerfChannel& operator=(const PerfChannel&) = delete;

  // Queues bytes to send.
  void send(std::string_view bytes) { outbox_.append(bytes); }
  // Bytes queued and not yet taken by the connection.
  size_t queued() const { return outbox_.size() - head_; }
  // Moves bytes; true when any moved.
  bool step();
  // After everything queued: our FIN.
  void finish() { finish_ = true; }
  // The connection ended: PeerClosed (the server closed after its answer) or
  // an error.
  const std::optional<PumpOutcome>& ended() const { return ended_; }
  // Lets go of the connection (graceful close); abort(): RST.
  void release();
  void abort();
  uint64_t bytes_sent() const { return sent_; }
  uint64_t bytes_received() const { return received_; }

 private:
  std::unique_ptr<StreamEnd> stream_;
  OnInput on_input_;
  std::string outbox_;
  size_t head_ = 0;
  bool finish_ = false;
  bool shut_ = false;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
  std::optional<PumpOutcome> ended_;
};

}  // namespace tinytcp::apps

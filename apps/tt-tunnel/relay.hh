#pragma once

// PlainRelay: one forwarded connection, one pass at a time on the tunnel's
// loop: the program's kernel socket <-> the stream that carries it across
// the tunnel (a plain carrier connection, or a robust session whose carriers
// come and go underneath: common/robust_streams.hh). Half-close is forwarded:
// EOF from one side becomes a FIN on the other once everything before it was
// handed over. Buffers between the sides are bounded (kRelayBuffer): a side
// that does not drain stops the other from reading. When either side breaks,
// the other is reset: the program's socket with a RST (SO_LINGER 0), the
// stream with abort_because() (a robust session tells its peer: ABORT), with
// the cause the program's side gave (reset, refused, unreachable).

#include <cstddef>
#include <optional>
#include <string>

#include "common/stream_end.hh"
#include "tt-tunnel/app_socket.hh"

namespace tinytcp::apps {

constexpr size_t kRelayBuffer = 1 << 20;

// A bounded FIFO of bytes.
class ByteQueue {
 public:
  std::string_view view() const { return std::string_view(bytes_).substr(head_); }
  size_t size() const { return bytes_.size() - head_; }
  bool full() const { return size() >= kRelayBuffer; }
  void push(std::string_view data) { bytes_.append(data); }
  void pop(size_t n);

 private:
  std::string bytes_;
  size_t head_ = 0;
};

struct RelayStatus {
  bool progress = false;
  bool finished = false;             // both directions closed: release the relay
  std::optional<std::string> error;  // broken: the program's side was reset
};

class PlainRelay {
 public:
  PlainRelay(AppSockets& sockets, AppSocket app, std::unique_ptr<StreamEnd> carrier)
      : sockets_(sockets), app_(std::move(app)), carrier_(std::move(carrier)) {}
  ~PlainRelay();
  PlainRelay(const PlainRelay&) = delete;
  PlainRelay& operator=(const PlainRelay&) = delete;

  RelayStatus step();
  uint64_t bytes_to_carrier() const { return to_carrier_total_; }
  uint64_t bytes_to_app() const { return to_app_total_; }
  // The robust session's counters as of the last step (nullopt: plain).
  const std::optional<session::SessionStats>& session_stats() const { return session_stats_; }

 private:
  // One pass over the program's socket; false when it broke (failed).
  bool step_app(RelayStatus& status);
  // The program closed and everything of it went to the carrier: half-close it.
  void shut_carrier_if_done();
  void fail(RelayStatus& status, std::string why, StreamEnd::AbortCause cause);

  AppSockets& sockets_;
  AppSocket app_;
  std::unique_ptr<StreamEnd> carrier_;
  ByteQueue to_carrier_, to_app_;
  uint64_t to_carrier_total_ = 0, to_app_total_ = 0;
  bool app_eof_ = false, carrier_eof_ = false;
  bool carrier_shut_ = false, app_shut_ = false;
  bool done_ = false;
  std::optional<session::SessionStats> session_stats_;
};

// What a broken connection's error text says about the cause ("connection
// lost: Connection refused" -> Refused); Reset when it says nothing known.
StreamEnd::AbortCause abort_cause_of(const std::string& error);

}  // namespace tinytcp::apps

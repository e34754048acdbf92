#pragma once

// The two ways a forwarded connection crosses the tunnel, each one pass at a
// time on the tunnel's loop:
//   PlainRelay    the program's socket <-> one carrier connection; when the
//                 carrier breaks, so does the program's connection (RST)
//   SessionRelay  the program's socket <-> a robust session (src/session),
//                 whose carriers come and go underneath (the owner's job)
// Both forward half-close: EOF from one side becomes a FIN on the other once
// everything before it was handed over. Buffers between the sides are bounded
// (kRelayBuffer): a side that does not drain stops the other from reading.

#include <cstddef>
#include <optional>
#include <string>

#include "common/stream_end.hh"
#include "session/session.hh"
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

 private:
  void fail(RelayStatus& status, std::string why);

  AppSockets& sockets_;
  AppSocket app_;
  std::unique_ptr<StreamEnd> carrier_;
  ByteQueue to_carrier_, to_app_;
  uint64_t to_carrier_total_ = 0, to_app_total_ = 0;
  bool app_eof_ = false, carrier_eof_ = false;
  bool carrier_shut_ = false, app_shut_ = false;
  bool done_ = false;
};

// The program's side of a robust session. The session is not owned (the
// client's Forward or the server's SessionAcceptor holds it).
class SessionRelay {
 public:
  SessionRelay(AppSockets& sockets, AppSocket app) : sockets_(sockets), app_(std::move(app)) {}
  ~SessionRelay();
  SessionRelay(const SessionRelay&) = delete;
  SessionRelay& operator=(const SessionRelay&) = delete;

  RelayStatus step(session::Session& session);
  // The session is gone (failed or refused): reset the program's side.
  void abort();
  bool app_closed() const { return app_.fd < 0; }

 private:
  AppSockets& sockets_;
  AppSocket app_;
  ByteQueue to_session_;
  bool app_eof_ = false, session_shut_ = false, app_shut_ = false;
};

}  // namespace tinytcp::apps

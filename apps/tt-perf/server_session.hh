#pragma once

// ServerSession: one connection on `tt-perf server`. It reads the client's
// header (common/perf_header.hh) and then sinks, echoes or replies as the
// header says, one step at a time on the server's loop. Output waiting to
// leave is bounded (kMaxQueued): past it the session stops reading until the
// client takes its replies (reply bytes owed are a count, not a buffer). A bad header aborts the
// connection.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/perf_header.hh"
#include "common/stream_end.hh"

namespace tinytcp::apps {

struct SessionResult {
  bool progress = false;
  bool finished = false;
  std::optional<std::string> error;
};

class ServerSession {
 public:
  static constexpr size_t kMaxQueued = 4 << 20;

  explicit ServerSession(std::unique_ptr<StreamEnd> stream) : stream_(std::move(stream)) {}
  ~ServerSession();
  ServerSession(const ServerSession&) = delete;
  ServerSession& operator=(const ServerSession&) = delete;

  SessionResult step();
  const std::string& peer() const { return stream_->peer(); }
  std::optional<PerfMode> mode() const {
    return header_ ? std::optional<PerfMode>(header_->mode) : std::nullopt;
  }
  uint64_t bytes_in() const { return bytes_in_; }
  uint64_t bytes_out() const { return bytes_out_; }

 private:
  void on_input(std::string_view in);
  void fail(SessionResult& result, std::string why);
  uint64_t queued() const { return out_.size() - out_head_ + pending_reply_; }

  std::unique_ptr<StreamEnd> stream_;
  std::string head_;  // the header while it arrives
  std::optional<PerfHeader> header_;
  std::optional<std::string> bad_header_;
  std::string out_;
  size_t out_head_ = 0;
  uint64_t request_progress_ = 0;  // reply: bytes of the current request
  uint64_t pending_reply_ = 0;     // reply: bytes owed (sent after out_)
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
  bool peer_closed_ = false;
  bool shut_ = false;
  bool done_ = false;
};

}  // namespace tinytcp::apps

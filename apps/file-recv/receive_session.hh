#pragma once

// One file-recv session: a connection from one sender, the protocol's
// receiving side on it (proto::FileReceiver), the files it writes (through
// the name claims, so no two sessions write one file), and its outcome. Many
// run at once on the receiver's one thread: step() moves what it can without
// waiting and returns.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/name_claims.hh"
#include "common/stream_server.hh"
#include "common/threaded_hash.hh"
#include "common/threaded_hash_runner.hh"
#include "proto/file_receiver.hh"

namespace tinytcp::apps {

struct SessionSettings {
  std::string output;  // the directory
  proto::ReceiverPolicy policy;
  bool direct_io = true;
  Duration idle_timeout = std::chrono::seconds(30);
  Duration close_linger = std::chrono::seconds(2);
};

class ReceiveSession {
 public:
  // `server` wakes when the session's hash worker finishes a job.
  ReceiveSession(std::unique_ptr<StreamEnd> stream, const SessionSettings& settings,
                 NameClaims& claims, StreamServer& server);
  ~ReceiveSession();
  ReceiveSession(const ReceiveSession&) = delete;
  ReceiveSession& operator=(const ReceiveSession&) = delete;

  // One pass at `now` (monotonic seconds); true if anything moved.
  bool step(double now);
  bool finished() const { return phase_ == Phase::Done; }
  // How long until the session can go on by itself (its OFFER rate), if it
  // waits for time at all.
  std::optional<Duration> time_until_ready() const;
  // Gives the session up at once (RST), with `why` as its error.
  void abort(const std::string& why);
  // Every file and directory verified and stored (or already present).
  bool ok() const;
  const std::string& peer() const { return peer_; }
  // Bytes of the current file so far and its size (for a progress bar).
  uint64_t position() const { return receiver_.position(); }
  uint64_t current_size() const;
  // The outcome lines: one per file, a summary for a tree, the error.
  void report(bool json) const;

 private:
  enum class Phase { Running, Closing, Done };
  void finish(std::optional<PumpOutcome> outcome, double now);

  std::unique_ptr<StreamEnd> stream_;
  StreamServer& server_;
  SessionSettings settings_;
  std::string peer_;
  ThreadedContentHash hash_;
  ThreadedHashRunner runner_;  // whole-file hashes (resume, confirm) off the loop
  ClaimingFileSink sink_;
  proto::FileReceiver receiver_;
  Phase phase_ = Phase::Running;
  double started_ = 0;
  double last_progress_ = 0;
  double ended_ = 0;
  double close_deadline_ = 0;
  std::optional<PumpOutcome> outcome_;  // why the stream ended, if not cleanly
};

}  // namespace tinytcp::apps

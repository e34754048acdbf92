#pragma once

// SenderTrace: `--trace FILE.csv`, the sender state of one tinytcp connection
// over time: one row per change, at most one per millisecond unless ssthresh
// moved (a loss response is always recorded). Columns:
//   time_s,cwnd,ssthresh,srtt_ms,rto_ms,bytes_in_flight,retransmits
// (time from the first row; docs/file-transfer.md plots one).

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "stack/host.hh"
#include "tcp/tcp_sender.hh"
#include "util/time.hh"

namespace tinytcp::apps {

class SenderTrace {
 public:
  // Creates (truncates) the file; throws std::runtime_error, one line, if it cannot.
  explicit SenderTrace(const std::string& path);
  ~SenderTrace();
  SenderTrace(const SenderTrace&) = delete;
  SenderTrace& operator=(const SenderTrace&) = delete;

  void row(Instant now, const tcp::SenderState& s, uint64_t retransmits);

  // Records connection `id` of `host` into `trace` from now on; the host's
  // trace callback keeps the writer alive.
  static void attach(std::shared_ptr<SenderTrace> trace, stack::Host& host, stack::SocketId id);

 private:
  std::FILE* file_;
  std::optional<Instant> origin_;
  Instant last_row_;
  uint64_t last_ssthresh_ = 0;
};

}  // namespace tinytcp::apps

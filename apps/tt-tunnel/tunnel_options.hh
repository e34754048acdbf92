#pragma once

// What both ends of tt-tunnel are told on the command line, and the counters
// they print (one line at exit, or JSON with --json).

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/stream_transport.hh"
#include "session/session_stats.hh"

namespace tinytcp::apps {

// transport.robust and transport.session say whether and how each
// forwarded connection is a robust session.
struct TunnelOptions {
  TransportOptions transport;
  size_t max_connections = 256;  // forwarded connections at once
};

// One forwarded connection as --json lists it.
struct ConnectionRecord {
  uint64_t number = 0;
  std::string end;  // "finished", "broken", or "open" (still forwarding at exit)
  uint64_t bytes_up = 0;
  uint64_t bytes_down = 0;
  std::optional<session::SessionStats> session;  // robust connections only
};

struct TunnelStats {
  // --json lists the last this many connections (the totals count all).
  static constexpr size_t kMaxListed = 1000;

  uint64_t accepted = 0;  // forwarded connections begun
  uint64_t refused = 0;   // turned away (limit, no carrier, target unreachable)
  uint64_t finished = 0;  // closed cleanly, both ways
  uint64_t broken = 0;    // ended with an error (program reset, session failed or aborted)
  uint64_t bytes_up = 0;  // from the client's programs toward the server's targets
  uint64_t bytes_down = 0;
  // Robust sessions, summed over the connections recorded.
  uint64_t replayed_bytes = 0;  // sent again after a reconnection
  uint64_t resumes = 0;
  uint64_t carriers_lost = 0;
  uint64_t aborts_sent = 0;  // resets this end told its peer (ABORT)
  uint64_t aborts_received = 0;
  std::deque<ConnectionRecord> connections;
  uint64_t unlisted = 0;  // older connections past kMaxListed

  // Counts a connection that ended (or is still open at exit) into the totals.
  void record(ConnectionRecord connection);
  nlohmann::json to_json() const;
  std::string to_line() const;
};

}  // namespace tinytcp::apps

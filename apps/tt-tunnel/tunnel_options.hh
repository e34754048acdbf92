#pragma once

// What both ends of tt-tunnel are told on the command line, and the counters
// they print (one line at exit, or JSON with --json).

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/stream_transport.hh"

namespace tinytcp::apps {

// transport.robust and transport.session say whether and how each
// forwarded connection is a robust session.
struct TunnelOptions {
  TransportOptions transport;
  size_t max_connections = 256;  // forwarded connections at once
};

struct TunnelStats {
  uint64_t accepted = 0;  // forwarded connections begun
  uint64_t refused = 0;   // turned away (limit, no carrier, target unreachable)
  uint64_t finished = 0;  // closed cleanly, both ways
  uint64_t broken = 0;    // ended with an error (program reset, session failed)
  uint64_t bytes_up = 0;  // from the client's programs toward the server's targets
  uint64_t bytes_down = 0;

  nlohmann::json to_json() const;
  std::string to_line() const;
};

}  // namespace tinytcp::apps

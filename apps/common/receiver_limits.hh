#pragma once

// What one file-recv session may cost, as command-line flags: the sender is
// anyone who can reach the port (the protocol has no authentication), so
// each session is held to a number of entries, a number of bytes, a reserve
// of free space, a run of refusals, and partial files that never complete
// are removed after a while. apply() copies the limits into the protocol's
// proto::ReceiverPolicy; the partial-file TTL is the app's to use with
// PosixFileSink::remove_stale_partials().

#include <chrono>
#include <cstdint>

#include <CLI/CLI.hpp>

#include "proto/file_receiver.hh"

namespace tinytcp::apps {

struct ReceiverLimits {
  uint64_t max_files = proto::ReceiverPolicy{}.max_files;
  uint64_t max_session_bytes = UINT64_MAX;  // no limit
  uint64_t free_space_reserve = proto::ReceiverPolicy{}.free_space_reserve;
  uint32_t max_refusals = proto::ReceiverPolicy{}.max_refusals_in_a_row;
  std::chrono::seconds partial_ttl = std::chrono::hours(24 * 7);  // zero: keep them

  void apply(proto::ReceiverPolicy& policy) const;
};

// --max-files N, --max-session-bytes SIZE (0: no limit), --free-reserve SIZE,
// --max-refusals N, --partial-ttl DURATION (0: never). SIZE takes K, M, G, T
// (powers of 1024: 64M, 1G); DURATION takes s, m, h or d (30d, 12h; seconds
// without one).
void add_receiver_limit_flags(CLI::App& app, ReceiverLimits& limits);

}  // namespace tinytcp::apps

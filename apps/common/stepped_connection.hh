#pragma once

// connect_stepped: a StreamConnection (the blocking pump and close that
// file-send drives) over one StreamEnd of a StreamClient, for streams that
// only exist as StreamEnds: robust sessions (common/robust_streams.hh).
// pump() steps the stream and waits on the client's loop in turn.

#include <memory>

#include "common/kernel_tcp.hh"
#include "common/stream_client.hh"
#include "common/stream_transport.hh"
#include "util/time.hh"

namespace tinytcp::apps {

// Opens the stream at once (a robust session connects its carrier, and
// reconnects, on its own; a receiver that never answers ends pump() with its
// idle timeout). Throws std::runtime_error "cannot reach ..." when no
// connection can be started.
std::unique_ptr<StreamConnection> connect_stepped(std::unique_ptr<StreamClient> client,
                                                  const HostPort& to, Duration timeout);

}  // namespace tinytcp::apps

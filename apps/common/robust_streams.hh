#pragma once

// Robust sessions (src/session, docs/session.md) behind the StreamClient and
// StreamServer interfaces, so any app that steps StreamEnds gets streams that
// survive the loss of the connection under them, whatever the transport:
//
//   robust_client(carriers, config)  every connect() is a new session; the
//     session's carriers are connections of `carriers`, made again (after the
//     session's backoff) whenever one breaks or falls silent. With the udp
//     transport, a carrier that died of silence also renews the tunnel socket
//     (at most every 2 s): the machine's address may have changed.
//   robust_server(carriers, config)  carriers accepted from `carriers` go
//     through a session::SessionAcceptor; accept() returns each new session
//     once; a resumed session continues on its new carrier unseen.
//
// A session's StreamEnd: step() moves bytes between the endpoint and the
// session and then between the session and its carrier; end is Error when
// the session failed (refused, gave up), PeerClosed when the peer half-closed;
// closed() once both directions are closed and acknowledged; release() lets
// the session finish its close on its own.

#include <memory>
#include <optional>

#include "common/stream_client.hh"
#include "common/stream_server.hh"
#include "session/session_config.hh"

namespace tinytcp::apps {

// `passivate_after`: a session with nothing moving and nothing unacknowledged
// for that long has its carrier closed on purpose (Session::passivate); the
// next byte the app writes wakes it (a new carrier, a resume).
std::unique_ptr<StreamClient> robust_client(std::unique_ptr<StreamClient> carriers,
                                            const session::SessionConfig& config,
                                            std::optional<Duration> passivate_after = {});
std::unique_ptr<StreamServer> robust_server(std::unique_ptr<StreamServer> carriers,
                                            const session::SessionConfig& config);

}  // namespace tinytcp::apps

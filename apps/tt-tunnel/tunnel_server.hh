#pragma once

// TunnelServer: `tt-tunnel server`. Carriers from tunnel clients arrive on
// --listen over the chosen transport (the udp transport: any number of
// clients on one UDP port, one Host each); every forwarded connection is
// connected on to --forward with kernel TCP. With --robust the carriers are
// handed to a session::SessionAcceptor first: a new session opens a
// connection to the target, a resumed one continues on its new carrier.

#include <netinet/in.h>

#include <atomic>
#include <map>
#include <memory>

#include "common/stream_server.hh"
#include "session/session_acceptor.hh"
#include "tt-tunnel/app_socket.hh"
#include "tt-tunnel/relay.hh"
#include "tt-tunnel/tunnel_options.hh"

namespace tinytcp::apps {

class TunnelServer {
 public:
  // Throws std::runtime_error (one line) when the port cannot be served or
  // the target does not resolve.
  TunnelServer(const TunnelOptions& options, uint16_t port, const HostPort& forward);
  ~TunnelServer();
  TunnelServer(const TunnelServer&) = delete;
  TunnelServer& operator=(const TunnelServer&) = delete;

  void run(const std::atomic<bool>& stop);
  const TunnelStats& stats() const { return stats_; }
  std::string summary() const;

 private:
  using CarrierId = session::SessionAcceptor::CarrierId;
  using SessionHandle = session::SessionAcceptor::SessionHandle;

  void accept_carriers(Instant now);
  bool step_plain(Instant now);
  bool step_robust(Instant now);
  void handle_events(Instant now);
  // A connection to the target, or nullopt (counted, logged) if none can be made.
  std::optional<AppSocket> connect_target(const std::string& for_whom);

  TunnelOptions options_;
  sockaddr_in forward_{};
  std::unique_ptr<StreamServer> server_;
  AppSockets sockets_;
  TunnelStats stats_;
  uint64_t next_number_ = 1;
  // Plain: one relay per carrier.
  std::map<uint64_t, std::unique_ptr<PlainRelay>> plain_;
  // Robust.
  std::unique_ptr<session::SessionAcceptor> acceptor_;
  std::map<CarrierId, std::unique_ptr<StreamEnd>> carriers_;
  std::map<SessionHandle, std::unique_ptr<SessionRelay>> relays_;
};

}  // namespace tinytcp::apps

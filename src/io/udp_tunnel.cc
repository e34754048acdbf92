#include "io/udp_tunnel.hh"

#include <spdlog/spdlog.h>

namespace tinytcp::io {
namespace {

// The socket's family follows the peer: an IPv4 peer gets an IPv4 socket as
// before, an IPv6 one an IPv6 socket ([::] for an unspecified local
// address); no peer: dual-stack on the unspecified address.
UdpSocketConfig socket_config(const UdpTunnelConfig& config) {
  UdpSocketConfig c = config;
  if (config.peer) {
    c.dual_stack = false;
    if (config.peer->ipv6 && !c.local.ipv6 && c.local.is_unspecified()) {
      c.local = UdpEndpoint::v6({}, c.local.port);
    }
  }
  return c;
}

}  // namespace

UdpTunnel::UdpTunnel(const UdpTunnelConfig& config) : socket_(socket_config(config)) {
  socket_.set_send_failure_handler(
      [this](std::string_view packet) { report_send_failure(packet); });
  if (config.peer) {
    connect(*config.peer);
  }
}

void UdpTunnel::connect(const UdpEndpoint& peer) {
  socket_.connect(peer);
  peer_ = peer;
}

bool UdpTunnel::accept_from(const UdpEndpoint& from) {
  if (!peer_) {
    // The listening side: the first sender becomes the peer, and from now on
    // the kernel filters everyone else out.
    connect(from);
    spdlog::info("udp tunnel: peer is {}", from.to_string());
    return true;
  }
  if (from != *peer_) {
    // Queued before connect() (which filters only what arrives later),
    // possibly in this very batch.
    socket_.count_drop(UdpDrop::kNotPeer, 1);
    return false;
  }
  return true;
}

size_t UdpTunnel::receive_batch(const PacketHandler& on_packet, size_t max_packets) {
  return socket_.receive_batch(
      [&on_packet](const UdpEndpoint&, std::string_view packet) { on_packet(packet); }, max_packets,
      [this](const UdpEndpoint& from, std::string_view) { return accept_from(from); });
}

void UdpTunnel::send(std::string_view packet) {
  send_batch(&packet, 1);
}

void UdpTunnel::send_batch(const std::string_view* packets, size_t count) {
  if (!peer_) {
    socket_.count_drop(UdpDrop::kNoPeer, count, /*sending=*/true);
    return;
  }
  socket_.send_batch(packets, nullptr, count);
}

}  // namespace tinytcp::io

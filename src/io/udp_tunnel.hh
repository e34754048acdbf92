#pragma once

// IPv4 datagrams carried one per UDP datagram between two endpoints, so two
// tinytcp processes talk through the kernel's UDP without any privileges. It
// is a point-to-point link: the socket is connected to the peer, so the
// kernel drops datagrams from anyone else. A tunnel started without a peer
// adopts the source of the first datagram it receives. (A listener that
// serves many peers at once uses a UdpPeerSocket under a peer table instead:
// stack/peer_hosts.hh.)
//
// The outer family is the peer's: a tunnel to an IPv6 peer is an IPv6 socket
// (an unspecified local address then binds [::]) and carries 20 bytes less
// per datagram (mtu()), so a full datagram still fits the same wire MTU. A
// tunnel started without a peer on the unspecified address is dual-stack
// (UdpSocketConfig::dual_stack) and adopts a peer of either family. The
// datagrams inside stay IPv4 whatever the outer family.
//
// Both directions are batched (UdpPeerSocket: recvmmsg/sendmmsg, UDP GSO/GRO).
// A send the kernel refuses is a lost datagram: counted, never fatal. Only
// setting the tunnel up (socket, bind, connect) throws.

#include <optional>
#include <string_view>

#include "io/adapter.hh"
#include "io/udp_peer_socket.hh"
#include "util/counters.hh"

namespace tinytcp::io {

using UdpTunnelDrop = UdpDrop;

struct UdpTunnelConfig : UdpSocketConfig {
  std::optional<UdpEndpoint> peer;  // unset: adopt the first sender
};

class UdpTunnel : public DatagramAdapter {
 public:
  // Opens, binds and (with a peer) connects the socket; throws
  // std::system_error naming the endpoint on failure.
  explicit UdpTunnel(const UdpTunnelConfig& config);

  size_t receive_batch(const PacketHandler& on_packet, size_t max_packets) override;
  using DatagramAdapter::receive_batch;
  void send(std::string_view packet) override;
  void send_batch(const std::string_view* packets, size_t count) override;

  int fd() const override { return socket_.fd(); }
  LinkType link_type() const override { return LinkType::kRawIp; }
  // The largest datagram to the peer: 1452 by default to an IPv6 peer, 1472
  // to an IPv4 one or before a peer is known.
  size_t mtu() const override { return peer_ ? socket_.mtu(*peer_) : socket_.mtu(); }
  const AdapterStats& stats() const override { return socket_.stats(); }
  const EnumCounters<UdpDrop>& drops() const { return socket_.drops(); }

  uint64_t segmented_sends() const { return socket_.segmented_sends(); }
  uint64_t coalesced_receives() const { return socket_.coalesced_receives(); }

  UdpEndpoint local_endpoint() const { return socket_.local_endpoint(); }
  std::optional<UdpEndpoint> peer() const { return peer_; }
  // Connects to `peer` (replacing any earlier one); throws on failure.
  void connect(const UdpEndpoint& peer);

 private:
  bool accept_from(const UdpEndpoint& from);

  UdpPeerSocket socket_;
  std::optional<UdpEndpoint> peer_;
};

}  // namespace tinytcp::io

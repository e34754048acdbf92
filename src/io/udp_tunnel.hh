#pragma once

// IPv4 datagrams carried one per UDP datagram between two endpoints, so two
// tinytcp processes talk through the kernel's UDP without any privileges. It
// is a point-to-point link: the socket is connected to the peer, so the
// kernel drops datagrams from anyone else. A tunnel started without a peer
// adopts the source of the first datagram it receives (the listening side).
//
// Both directions are batched (recvmmsg/sendmmsg) with buffers allocated once.
// A send the kernel refuses (EAGAIN, ENOBUFS, EPERM, ECONNREFUSED when the
// peer is not up yet, EHOSTUNREACH...) is a lost datagram: counted, never
// fatal. Only setting the tunnel up (socket, bind, connect) throws.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/adapter.hh"
#include "io/file_descriptor.hh"
#include "util/counters.hh"

namespace tinytcp::io {

struct UdpEndpoint {
  uint32_t address = 0;  // IPv4, host order
  uint16_t port = 0;

  // "a.b.c.d:port"; std::nullopt when malformed.
  static std::optional<UdpEndpoint> parse(std::string_view text);
  std::string to_string() const;
  friend bool operator==(const UdpEndpoint& a, const UdpEndpoint& b) {
    return a.address == b.address && a.port == b.port;
  }
};

struct UdpTunnelConfig {
  UdpEndpoint local;                  // port 0: the kernel picks one
  std::optional<UdpEndpoint> peer;    // unset: adopt the first sender
  size_t mtu = 1500;                  // largest datagram send() accepts
  size_t batch = 64;                  // datagrams per recvmmsg/sendmmsg
  size_t receive_slot_bytes = 65536;  // per received datagram; larger ones are dropped
  int socket_buffer_bytes = 4 << 20;  // SO_RCVBUF/SO_SNDBUF request
};

enum class UdpTunnelDrop {
  kTruncated,     // received datagram larger than receive_slot_bytes
  kReceiveError,  // recvmmsg failed other than EAGAIN
  kNoPeer,        // send before any peer is known
  kTooBig,        // send of a packet larger than the MTU
  kRefused,       // ECONNREFUSED: nothing listens at the peer (yet)
  kNoBuffers,     // EAGAIN/ENOBUFS: the socket's send buffer is full
  kNotPermitted,  // EPERM: a firewall rule refused it
  kUnreachable,   // EHOSTUNREACH/ENETUNREACH
  kSendError,     // any other send error
  kCount,
};
const char* to_string(UdpTunnelDrop drop);

class UdpTunnel : public DatagramAdapter {
 public:
  // Opens, binds and (with a peer) connects the socket; throws
  // std::system_error naming the endpoint on failure.
  explicit UdpTunnel(const UdpTunnelConfig& config);

  size_t receive_batch(const PacketHandler& on_packet, size_t max_packets) override;
  using DatagramAdapter::receive_batch;
  void send(std::string_view packet) override;
  void send_batch(const std::string_view* packets, size_t count) override;

  int fd() const override { return socket_.get(); }
  LinkType link_type() const override { return LinkType::kRawIp; }
  size_t mtu() const override { return config_.mtu; }
  const AdapterStats& stats() const override { return stats_; }
  const EnumCounters<UdpTunnelDrop>& drops() const { return drops_; }

  UdpEndpoint local_endpoint() const;
  std::optional<UdpEndpoint> peer() const { return peer_; }
  // Connects to `peer` (replacing any earlier one); throws on failure.
  void connect(const UdpEndpoint& peer);

 private:
  void count_send_error(int error);
  void drop(UdpTunnelDrop reason);

  UdpTunnelConfig config_;
  FileDescriptor socket_;
  std::optional<UdpEndpoint> peer_;
  AdapterStats stats_;
  EnumCounters<UdpTunnelDrop> drops_;
  // recvmmsg state, one slot per datagram of a batch.
  std::vector<char> receive_buffer_;
  std::vector<mmsghdr> receive_msgs_;
  std::vector<iovec> receive_iovs_;
  std::vector<sockaddr_in> receive_from_;
  // sendmmsg state.
  std::vector<mmsghdr> send_msgs_;
  std::vector<iovec> send_iovs_;
};

}  // namespace tinytcp::io

#pragma once

// IPv4 datagrams carried one per UDP datagram between two endpoints, so two
// tinytcp processes talk through the kernel's UDP without any privileges. It
// is a point-to-point link: the socket is connected to the peer, so the
// kernel drops datagrams from anyone else. A tunnel started without a peer
// adopts the source of the first datagram it receives (the listening side);
// `adopt_peer_if` narrows that to datagrams that can open a session, so a
// late datagram from an earlier peer is not mistaken for the next one.
//
// Both directions are batched (recvmmsg/sendmmsg) with buffers allocated once.
// A send the kernel refuses (EAGAIN, ENOBUFS, EPERM, ECONNREFUSED when the
// peer is not up yet, EHOSTUNREACH...) is a lost datagram: counted, never
// fatal. Only setting the tunnel up (socket, bind, connect) throws.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
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
  UdpEndpoint local;                // port 0: the kernel picks one
  std::optional<UdpEndpoint> peer;  // unset: adopt the first sender
  // The largest datagram send() accepts. Carried inside UDP over IPv4 (28
  // bytes of headers), 1472 fits an Ethernet path of MTU 1500 without
  // fragments; loopback would take more, a real link would drop them.
  size_t mtu = 1472;
  size_t batch = 64;                  // datagrams per recvmmsg/sendmmsg
  size_t receive_slot_bytes = 65536;  // per received datagram; larger ones are dropped
  int socket_buffer_bytes = 4 << 20;  // SO_RCVBUF/SO_SNDBUF request
  // UDP segmentation offload: a run of equal-sized packets in one send_batch()
  // goes to the kernel as one message (UDP_SEGMENT), and the kernel may hand
  // several datagrams up as one (UDP_GRO), which receive_batch() splits again.
  // On the wire they are the same datagrams. Turned off by itself if the kernel
  // refuses it.
  bool segmentation_offload = true;
  // Without a peer: a received datagram whose payload fails this test is
  // dropped (kNotOpening) instead of making its sender the peer. Unset: the
  // first datagram from anyone is adopted.
  std::function<bool(std::string_view)> adopt_peer_if;
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
  kNotOpening,    // no peer yet, and the datagram failed adopt_peer_if
  kNotPeer,       // from someone else, queued before the peer was adopted
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

  // Messages sent with UDP_SEGMENT, and reads that held several datagrams.
  uint64_t segmented_sends() const { return segmented_sends_; }
  uint64_t coalesced_receives() const { return coalesced_receives_; }

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
  // Room for one control message carrying an int (UDP_SEGMENT, UDP_GRO).
  struct alignas(cmsghdr) Control {
    char bytes[CMSG_SPACE(sizeof(int))];
  };
  // Packets per UDP_SEGMENT message at most, and their bytes at most.
  static constexpr size_t kMaxSegments = 64;
  static constexpr size_t kMaxSegmentedBytes = 65000;

  size_t flush_send(size_t messages, size_t unsent_after);

  bool gso_ = false;  // UDP_SEGMENT in use
  uint64_t segmented_sends_ = 0;
  uint64_t coalesced_receives_ = 0;
  // recvmmsg state, one slot per datagram (or GRO train) of a batch. The
  // slots (4 MiB by default) are not zero-filled: a 1472-byte datagram then
  // touches one page of its 64 KiB slot, and setting the tunnel up does not
  // fault in 1024 pages before the first SYN.
  std::unique_ptr<char[]> receive_buffer_;
  std::vector<mmsghdr> receive_msgs_;
  std::vector<iovec> receive_iovs_;
  std::vector<sockaddr_in> receive_from_;
  std::vector<Control> receive_control_;
  // sendmmsg state: one message per datagram or per UDP_SEGMENT run.
  std::vector<mmsghdr> send_msgs_;
  std::vector<iovec> send_iovs_;  // kMaxSegments per message
  std::vector<Control> send_control_;
  std::vector<size_t> send_segments_;  // packets in each message
  std::vector<size_t> send_bytes_;
};

}  // namespace tinytcp::io

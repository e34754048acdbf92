#pragma once

// UdpPeerSocket: one UDP socket that exchanges datagrams with any number of
// peers, batched both ways: recvmmsg hands up each datagram with the endpoint
// it came from, and sendmmsg takes a destination per datagram, so one system
// call carries datagrams for many peers. With UDP_SEGMENT a run of
// equal-sized datagrams to the same peer goes down as one message; with
// UDP_GRO the kernel may hand several datagrams from one peer up as one read,
// which receive_batch() splits again. Buffers are allocated once.
//
// It is the socket under both the point-to-point UdpTunnel (connected to its
// peer) and the many-peer listener of the file receiver (unconnected; the
// peer table above it decides who is a peer). A send the kernel refuses
// (EAGAIN, ENOBUFS, EPERM, ECONNREFUSED, EHOSTUNREACH...) is a lost datagram:
// counted, never fatal. Only setting the socket up (socket, bind, connect)
// throws.
//
// Either family: the local endpoint decides. An IPv4 address binds an IPv4
// socket, an IPv6 one an IPv6 socket. The unspecified address (0.0.0.0 or
// ::) with `dual_stack` binds [::] with IPV6_V6ONLY off, so IPv4 peers reach
// it too (as IPv4-mapped addresses, handed up as the IPv4 endpoints they
// are); on a kernel without IPv6 it falls back to 0.0.0.0.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/adapter.hh"
#include "io/file_descriptor.hh"
#include "io/udp_endpoint.hh"
#include "util/counters.hh"

namespace tinytcp::io {

struct UdpSocketConfig {
  UdpEndpoint local;  // port 0: the kernel picks one
  // 0.0.0.0 or :: binds [::] for both families (above); off, 0.0.0.0 binds
  // an IPv4 socket and :: an IPv6-only one.
  bool dual_stack = true;
  // The largest datagram send_batch() accepts to an IPv4 peer. Carried inside
  // UDP over IPv4 (28 bytes of headers), 1472 fits an Ethernet path of MTU
  // 1500 without fragments; loopback would take more, a real link would drop
  // them. To an IPv6 peer it is 20 bytes less (kIpv6Overhead: the outer IPv6
  // header is 40 bytes, not 20), 1452, so that datagram fits 1500 too.
  size_t mtu = 1472;
  size_t batch = 64;                  // datagrams per recvmmsg/sendmmsg
  size_t receive_slot_bytes = 65536;  // per received datagram; larger ones are dropped
  int socket_buffer_bytes = 4 << 20;  // SO_RCVBUF/SO_SNDBUF request
  // UDP segmentation offload (UDP_SEGMENT out, UDP_GRO in); on the wire the
  // datagrams are the same. Turned off by itself if the kernel refuses it.
  bool segmentation_offload = true;
};

enum class UdpDrop {
  kTruncated,     // received datagram larger than receive_slot_bytes
  kReceiveError,  // recvmmsg failed other than EAGAIN
  kNoPeer,        // send before any peer is known (UdpTunnel)
  kTooBig,        // send of a packet larger than the MTU
  kRefused,       // ECONNREFUSED: nothing listens at the peer (yet)
  kNoBuffers,     // EAGAIN/ENOBUFS: the socket's send buffer is full
  kNotPermitted,  // EPERM: a firewall rule refused it
  kUnreachable,   // EHOSTUNREACH/ENETUNREACH
  kSendError,     // any other send error
  kNotPeer,       // from someone else, queued before the peer was adopted (UdpTunnel)
  kFamily,        // to an IPv6 peer from an IPv4 socket
  kCount,
};
const char* to_string(UdpDrop drop);

class UdpPeerSocket {
 public:
  using Handler = std::function<void(const UdpEndpoint& from, std::string_view packet)>;
  // What a received datagram is for the caller: kept (handed up) or dropped,
  // decided once per read (a GRO train comes from one sender). A filter that
  // refuses counts why itself (count_drop).
  using Filter = std::function<bool(const UdpEndpoint& from, std::string_view first_packet)>;

  // Opens and binds the socket; throws std::system_error naming the endpoint.
  explicit UdpPeerSocket(const UdpSocketConfig& config);

  // Reads up to `max_packets` datagrams without blocking and hands each to
  // `on_packet` with its sender; a read `filter` refuses is not handed up.
  // Returns the datagrams handed up.
  size_t receive_batch(const Handler& on_packet, size_t max_packets,
                       const Filter& filter = nullptr);
  // Sends `packets[i]` to `to[i]`; with `to` null, to the connected peer.
  void send_batch(const std::string_view* packets, const UdpEndpoint* to, size_t count);
  // Gets each packet of a send_batch() the kernel would not take for want of
  // buffers (EAGAIN, ENOBUFS), during that call (see io::SendFailureHandler).
  void set_send_failure_handler(std::function<void(std::string_view packet)> handler) {
    send_failure_ = std::move(handler);
  }
  // Connects the socket (the kernel then filters other senders out).
  void connect(const UdpEndpoint& peer);

  int fd() const { return socket_.get(); }
  // The outer IPv6 header's extra bytes over IPv4's.
  static constexpr size_t kIpv6Overhead = 20;
  // The largest datagram to an IPv4 peer; mtu(peer): to that peer.
  size_t mtu() const { return config_.mtu; }
  size_t mtu(const UdpEndpoint& peer) const {
    return peer.ipv6 ? config_.mtu - kIpv6Overhead : config_.mtu;
  }
  int family() const { return family_; }  // AF_INET or AF_INET6
  UdpEndpoint local_endpoint() const;
  const AdapterStats& stats() const { return stats_; }
  const EnumCounters<UdpDrop>& drops() const { return drops_; }
  // Counts a drop the caller decided (a UdpTunnel without a peer, say).
  void count_drop(UdpDrop reason, uint64_t n = 1, bool sending = false);
  // Messages sent with UDP_SEGMENT, and reads that held several datagrams.
  uint64_t segmented_sends() const { return segmented_sends_; }
  uint64_t coalesced_receives() const { return coalesced_receives_; }

 private:
  void count_send_error(int error);
  size_t flush_send(size_t messages, size_t unsent_after);

  UdpSocketConfig config_;
  int family_ = AF_INET;
  FileDescriptor socket_;
  std::optional<UdpEndpoint> connected_;
  AdapterStats stats_;
  EnumCounters<UdpDrop> drops_;
  // Room for one control message carrying an int (UDP_SEGMENT, UDP_GRO).
  struct alignas(cmsghdr) Control {
    char bytes[CMSG_SPACE(sizeof(int))];
  };
  // Packets per UDP_SEGMENT message at most, and their bytes at most.
  static constexpr size_t kMaxSegments = 64;
  static constexpr size_t kMaxSegmentedBytes = 65000;

  // The packets of message `m` of the batch being sent, to send_failure_.
  void report_message(size_t m);
  std::function<void(std::string_view packet)> send_failure_;

  bool gso_ = false;  // UDP_SEGMENT in use
  uint64_t segmented_sends_ = 0;
  uint64_t coalesced_receives_ = 0;
  // recvmmsg state, one slot per datagram (or GRO train) of a batch. The
  // slots (4 MiB by default) are not zero-filled: a 1472-byte datagram then
  // touches one page of its 64 KiB slot, and setting the socket up does not
  // fault in 1024 pages before the first SYN.
  std::unique_ptr<char[]> receive_buffer_;
  std::vector<mmsghdr> receive_msgs_;
  std::vector<iovec> receive_iovs_;
  std::vector<sockaddr_storage> receive_from_;
  std::vector<Control> receive_control_;
  // sendmmsg state: one message per datagram or per UDP_SEGMENT run.
  std::vector<mmsghdr> send_msgs_;
  std::vector<iovec> send_iovs_;  // kMaxSegments per message
  std::vector<Control> send_control_;
  std::vector<sockaddr_storage> send_to_;
  std::vector<size_t> send_segments_;  // packets in each message
  std::vector<size_t> send_bytes_;
};

}  // namespace tinytcp::io

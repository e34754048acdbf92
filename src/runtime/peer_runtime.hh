#pragma once

// PeerRuntime: the listening side of the UDP tunnel for many peers at once.
// One UDP socket (io::UdpPeerSocket) on the event loop, one Host per peer
// (stack::PeerHosts): a datagram from a known peer goes to that peer's Host,
// a valid SYN from an unknown one may create a peer, anything else from an
// unknown one is dropped and counted.
//
// Both directions stay batched across peers: one recvmmsg reads datagrams of
// every peer; what all the Hosts send during one loop pass is collected and
// leaves with one sendmmsg before the loop waits again (runs of equal-sized
// datagrams to one peer as one UDP_SEGMENT message), with the pure ACKs a
// later ACK of the same peer's connection supersedes left out.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/event_loop.hh"
#include "io/impairment.hh"
#include "io/pcap_writer.hh"
#include "io/udp_peer_socket.hh"
#include "stack/peer_hosts.hh"

namespace tinytcp::runtime {

struct PeerRuntimeOptions {
  io::UdpSocketConfig socket;  // socket.local: the UDP port we listen on
  stack::PeerHostsConfig peers;
  bool coalesce_acks = true;
  std::string pcap;  // capture of the inner datagrams, both ways; empty: none
  // The impairment stage on our side of the link, each direction (one model
  // for all peers: a shared bottleneck). `corrupt` is not available here (a
  // flipped bit could land in the peer tag that rides with a held packet).
  std::optional<io::ImpairmentConfig> impair_in;
  std::optional<io::ImpairmentConfig> impair_out;
  uint64_t seed = 1;
};

struct PeerRuntimeStats {
  uint64_t batches = 0;    // send_batch() calls
  uint64_t datagrams = 0;  // datagrams the Hosts sent (before coalescing)
  uint64_t acks_coalesced = 0;
  // Datagrams the socket refused for want of buffers, handed back to their
  // peer's Host to send again, and those past the bound of one pass.
  uint64_t refused_resent = 0;
  uint64_t refused_unreported = 0;
};

class PeerRuntime {
 public:
  static constexpr size_t kMaxBatchDatagrams = 256;
  static constexpr size_t kMaxBatchBytes = 512 * 1024;
  static constexpr size_t kMaxRefused = 1024;

  // Throws (one line for the user) when the socket cannot be set up.
  explicit PeerRuntime(PeerRuntimeOptions options);
  ~PeerRuntime();
  PeerRuntime(const PeerRuntime&) = delete;
  PeerRuntime& operator=(const PeerRuntime&) = delete;

  stack::PeerHosts& peers() { return peers_; }
  io::EventLoop& loop() { return loop_; }
  Instant now() const { return loop_.now(); }
  const io::UdpPeerSocket& socket() const { return socket_; }
  const PeerRuntimeStats& stats() const { return stats_; }
  // Hands the datagrams batched so far to the socket (the loop does it
  // before every wait).
  void flush();

 private:
  struct Queued {
    stack::PeerKey to;
    size_t offset;
    size_t size;
  };
  void on_readable();
  void queue(const stack::PeerKey& to, std::string_view datagram);
  // Impairment: datagrams held with their peer as a 6-byte tag in front.
  // Both directions, from the event loop only.
  void release_impaired(Instant now);
  // Inbound: hands datagrams to the Hosts, so never from inside a Host's
  // output (flush() runs there: a TCP sender would be re-entered mid-send).
  void release_inbound(Instant now);
  void release_outbound(Instant now);
  void send_views();
  // The socket refused `packet`, one of views_: kept with its peer.
  void on_refused(std::string_view packet);
  void report_refused();

  PeerRuntimeOptions options_;
  io::EventLoop loop_;
  io::UdpPeerSocket socket_;
  stack::PeerHosts peers_;
  std::unique_ptr<io::PcapWriter> pcap_;
  std::unique_ptr<io::ImpairmentModel> impair_in_;
  bool in_host_output_ = false;  // inside queue(): a Host is sending
  std::unique_ptr<io::ImpairmentModel> impair_out_;
  std::string tagged_;
  std::vector<std::string_view> released_;
  io::EventLoop::SourceId impair_source_ = 0;
  io::EventLoop::SourceId peers_source_ = 0;
  io::EventLoop::SourceId flush_source_ = 0;

  std::vector<char> batch_;
  size_t batch_bytes_ = 0;
  std::vector<Queued> queued_;
  std::vector<std::string_view> views_;
  std::vector<io::UdpEndpoint> endpoints_;
  size_t refused_cursor_ = 0;  // views_ are refused in order: where to look first
  std::vector<std::pair<stack::PeerKey, std::string>> refused_;
  PeerRuntimeStats stats_;
};

}  // namespace tinytcp::runtime

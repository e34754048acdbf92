#pragma once

// The one interface every link to the outside world implements: TunDevice
// (raw IPv4), TapDevice (Ethernet frames), UdpTunnel (IPv4 inside UDP), and the
// wrappers ImpairedAdapter and PcapCapture, which take any adapter and are one
// themselves. The stack above sees packets, not devices.
//
// Receiving is pull-based and batched: the event loop calls receive_batch()
// when fd() is readable (and at next_deadline() for adapters that hold packets
// back); the adapter reads until the kernel reports EAGAIN or the batch limit is
// reached and hands each packet to the handler. The view is valid only during
// the call (buffers are reused; nothing is allocated per packet).
//
// Nothing here assumes that one read is one MTU-sized packet: a packet handed
// up may be larger than mtu() (a GSO/TSO super-packet once the TUN device runs
// with IFF_VNET_HDR), and an adapter may split one read into several packets.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "util/time.hh"

namespace tinytcp::io {

// What a packet handed to or from an adapter starts with. Values are the pcap
// LINKTYPE_ numbers (tcpdump.org/linktypes.html), so a capture uses them as is.
enum class LinkType : uint16_t {
  kEthernet = 1,  // LINKTYPE_ETHERNET: 14-byte Ethernet II header, then the payload
  kRawIp = 101,   // LINKTYPE_RAW: the packet is an IPv4 (or IPv6) datagram
};

const char* to_string(LinkType type);

// Counters every adapter keeps. Drops are counted, never thrown: a packet the
// kernel would not take (ENOBUFS, EAGAIN, EPERM, ECONNREFUSED) is a lost packet.
struct AdapterStats {
  uint64_t packets_received = 0;
  uint64_t bytes_received = 0;
  uint64_t packets_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t receive_drops = 0;  // truncated, oversized or unreadable input
  uint64_t send_drops = 0;     // refused by the kernel, too large, or no peer
};

using PacketHandler = std::function<void(std::string_view packet)>;
// Gets a packet the kernel would not take for want of buffers (ENOBUFS,
// EAGAIN: a full local queue or socket buffer), as it was given to send(),
// so the stack can send it again at once instead of finding it lost later.
// Called from inside send()/send_batch() (or a wrapper's timed work): it
// must not send; the view is valid only during the call.
using SendFailureHandler = std::function<void(std::string_view packet)>;

class DatagramAdapter {
 public:
  // A batch handed to one receive_batch() call, unless the caller says otherwise.
  static constexpr size_t kDefaultBatch = 64;

  virtual ~DatagramAdapter() = default;

  // Reads what is ready without blocking, up to about `max_packets` (an
  // adapter that splits one read into several packets finishes that read),
  // and calls `on_packet` for each. Returns how many packets were handed up.
  // Also does the adapter's timed work that is due (see next_deadline()).
  // `on_packet` may send, but must not call receive_batch() on this adapter.
  virtual size_t receive_batch(const PacketHandler& on_packet, size_t max_packets) = 0;
  size_t receive_batch(const PacketHandler& on_packet) {
    return receive_batch(on_packet, kDefaultBatch);
  }

  // Sends one packet (never blocks). A packet the kernel does not take is
  // counted in stats().send_drops and dropped, as a link would.
  virtual void send(std::string_view packet) = 0;
  // Sends several packets; adapters that can batch the syscall override it.
  virtual void send_batch(const std::string_view* packets, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      send(packets[i]);
    }
  }

  // The descriptor to watch for readability (-1 when there is none).
  virtual int fd() const = 0;
  virtual LinkType link_type() const = 0;
  // The link MTU: the largest IP datagram the link carries (for kEthernet, a
  // frame is up to mtu() + 14 bytes).
  virtual size_t mtu() const = 0;
  virtual const AdapterStats& stats() const = 0;

  // When the adapter next has timed work (a delayed packet to release);
  // std::nullopt when it has none. Plain devices never have any.
  virtual std::optional<Instant> next_deadline() const { return std::nullopt; }

  // Where packets refused for want of buffers go (see SendFailureHandler);
  // wrappers pass it to the adapter they wrap. Counted as send drops too.
  virtual void set_send_failure_handler(SendFailureHandler handler) {
    send_failure_ = std::move(handler);
  }

 protected:
  void report_send_failure(std::string_view packet) const {
    if (send_failure_) {
      send_failure_(packet);
    }
  }

 private:
  SendFailureHandler send_failure_;
};

}  // namespace tinytcp::io

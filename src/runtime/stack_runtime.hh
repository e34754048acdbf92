#pragma once

// StackRuntime: a tinytcp Host on a real link, for the apps and for programs
// that embed tinytcp (docs/library.md). It opens the device named by
// RuntimeOptions::dev (tunN, tapN with ARP on top, or udp:HOST:PORT, the
// unprivileged UDP tunnel), optionally wraps it in the impairment stage and a
// pcap capture, and runs the Host on the io/ event loop: datagrams in from the
// device, datagrams out to it, Host timers as a deadline source. The loop
// sleeps until the next packet or deadline; an idle stack uses no CPU.
//
// Datagrams the Host sends during one pass of the loop are collected (up to
// kMaxBatchDatagrams or kMaxBatchBytes) and handed to the adapter with one
// send_batch() before the loop waits again, so a TUN device in offload mode
// (IFF_VNET_HDR, TSO/GSO super-packets, see RuntimeOptions::offload) can
// merge them, and
// pure ACKs superseded within the batch are left out (coalesce_acks). On the
// way in, each read of the device's queue (up to 64 packets) reaches the Host
// with one clock reading and its pure ACKs held to the end of the batch
// (Host::hold_acks), so most of the ACKs coalescing would leave out are never
// built.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/adapter.hh"
#include "io/event_loop.hh"
#include "stack/host.hh"
#include "wire/ipv4.hh"
#include "wire/ipv6.hh"

namespace tinytcp::runtime {

struct RuntimeOptions {
  // "tun144", "tap10", or "udp:PEER_IP:PORT" (add "@LOCAL_PORT" to fix our port).
  std::string dev = "tun144";
  // TUN offload: IFF_VNET_HDR, checksum offload and TSO4, up to 64 KiB per
  // read and write. A "+offload" suffix on tunN turns it on, "+nooffload"
  // off; kAuto: offload_by_default decides. (Not std::optional<bool>: GCC's
  // UBSan reports its copy when empty as a load of an invalid bool.)
  enum class Offload : uint8_t { kAuto, kOn, kOff };
  Offload offload = Offload::kAuto;
  // kAuto: tunN tries it (plain packets when the kernel refuses)
  // unless an impairment is set (that stage would see super-packets).
  bool offload_by_default = true;
  // io_uring for plain kernel devices: each loop pass's batch of writes goes
  // to the kernel in one io_uring_enter (io::UringWriter) instead of one
  // write() per packet, and reads come up to 64 per io_uring_enter
  // (io::UringReader) instead of one read() each; write() and read() when
  // io_uring cannot be set up (logged). kAuto: on for a plain tunN (no
  // offload: "+nooffload", an impairment, or a kernel that refuses it), off
  // for tapN. kOn ("+uring" after the device name: tun144+uring, tap10+uring)
  // also on tapN, and on tunN it means no offload unless "+offload" asks for
  // it (then io_uring is not used). kOff ("+nouring"): read() and write().
  enum class Uring : uint8_t { kAuto, kOn, kOff };
  Uring uring = Uring::kAuto;
  // Leave out pure ACKs that a later ACK in the same batch supersedes
  // (io/ack_coalescer.hh): one ACK per connection and loop pass under load.
  bool coalesce_acks = true;
  std::optional<wire::Ipv4Address> address;  // default: 169.254.N.9 for tunN/tapN
  // Our IPv6 address (HostConfig::ipv6). Default fd00:7474:N::9 for tunN/tapN
  // (N's decimal digits as the group, as scripts/tun.sh and tap.sh give the
  // kernel fd00:7474:N::1/64); none on udp: unless set here. ipv6 = false
  // turns IPv6 off whatever address6 holds.
  std::optional<wire::Ipv6Address> address6;
  bool ipv6 = true;
  std::string pcap;        // capture file, empty: none
  std::string impair;      // impairment spec, each direction
  std::string impair_in;   // inbound only: used instead of `impair` when not empty
  std::string impair_out;  // outbound only: likewise
  uint64_t seed = 1;
  // Answer SYNs with SYN cookies when a listener's SYN queue is full
  // (stack::HostConfig::syn_cookies); off, such SYNs are dropped.
  bool syn_cookies = true;
  // tcp.mss: left at the default, it becomes the device MTU - 40 (8960 at MTU
  // 9000); set to something else, it is only lowered to fit the MTU.
  tcp::TcpConfig tcp;

  // Takes the suffixes "+offload", "+nooffload", "+uring" and "+nouring" off
  // the end of `dev`, in any order, into `offload` and `uring` (StackRuntime does it
  // first; "tun144+uring+offload" leaves "tun144").
  void take_device_suffixes();
};

struct RuntimeStats {
  uint64_t batches = 0;    // send_batch() calls
  uint64_t datagrams = 0;  // datagrams the Host sent (before coalescing)
  uint64_t acks_coalesced = 0;
  // Datagrams the device refused for want of buffers, handed back to the
  // Host to send again (Host::on_send_failed), and those past the bound of
  // one loop pass (left to the Host's own loss recovery).
  uint64_t refused_resent = 0;
  uint64_t refused_unreported = 0;
};

class StackRuntime {
 public:
  static constexpr size_t kMaxBatchDatagrams = 256;
  static constexpr size_t kMaxBatchBytes = 512 * 1024;
  // Refused datagrams kept for the Host per loop pass at most.
  static constexpr size_t kMaxRefused = 1024;

  // Throws std::runtime_error (one line for the user) when the device cannot
  // be opened or an option is malformed.
  explicit StackRuntime(RuntimeOptions options);
  ~StackRuntime();

  stack::Host& host() { return *host_; }
  io::EventLoop& loop() { return loop_; }
  // The clock; while a batch of received packets is handed to the Host (and
  // so in the app callbacks it causes), the time the batch began.
  Instant now() const;
  // The kernel side of a tunN/tapN link (169.254.N.1), for defaults.
  std::optional<wire::Ipv4Address> kernel_peer() const { return kernel_peer_; }
  // Its IPv6 twin (fd00:7474:N::1); nullopt when IPv6 is off or not tunN/tapN.
  std::optional<wire::Ipv6Address> kernel_peer6() const { return kernel_peer6_; }
  const io::DatagramAdapter& adapter() const { return *top_; }
  // The device itself (under any impairment or capture wrapper).
  const io::DatagramAdapter& device() const { return *device_; }

  // Hands the datagrams batched so far to the adapter; the loop does this
  // before every wait, so only code that sends outside the loop needs it.
  void flush();
  const RuntimeStats& stats() const { return stats_; }

  // Runs the loop until `done()` is true (checked after every wake-up) or
  // `timeout` passes; returns done().
  bool run_until(const std::function<bool()>& done, Duration timeout);

 private:
  struct Tap;
  // One read of the adapter's queue into the Host, its ACKs held to the end
  // (Host::hold_acks) when coalesce_acks is on.
  void receive_batch();
  void on_packet(std::string_view packet);
  void send_datagram(std::string_view datagram);
  // TAP: the neighbor an IPv6 datagram of ours goes to.
  wire::Ipv6Address ipv6_next_hop(std::string_view datagram) const;
  void queue_datagram(std::string_view datagram);
  // The device refused `packet` (ENOBUFS, EAGAIN): kept for report_refused().
  void on_refused(std::string_view packet);
  // Hands the refused datagrams to the Host, outside any send.
  void report_refused();

  RuntimeOptions options_;
  io::EventLoop loop_;
  std::unique_ptr<io::DatagramAdapter> device_;
  std::unique_ptr<io::DatagramAdapter> impaired_;
  std::unique_ptr<io::DatagramAdapter> capture_;
  io::DatagramAdapter* top_ = nullptr;
  std::unique_ptr<Tap> tap_;
  std::unique_ptr<stack::Host> host_;
  std::optional<wire::Ipv4Address> kernel_peer_;
  std::optional<wire::Ipv6Address> kernel_peer6_;
  io::PacketHandler on_packet_;
  std::optional<Instant> batch_now_;  // set during receive_batch()
  io::EventLoop::SourceId adapter_source_ = 0;
  io::EventLoop::SourceId host_source_ = 0;
  io::EventLoop::SourceId tap_source_ = 0;
  io::EventLoop::SourceId flush_source_ = 0;

  // Output batch: datagrams back to back in one buffer.
  std::vector<char> batch_;
  size_t batch_bytes_ = 0;
  std::vector<std::pair<size_t, size_t>> batch_spans_;  // offset, size
  std::vector<std::string_view> batch_views_;
  std::vector<std::string> refused_;  // IP datagrams (either family), at most kMaxRefused
  RuntimeStats stats_;
};

}  // namespace tinytcp::runtime

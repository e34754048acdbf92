#pragma once

// What TunDevice and TapDevice share: a Linux TUN/TAP device opened through
// /dev/net/tun (IFF_NO_PI, so each read or write is exactly one packet or
// frame, no 4-byte prefix), non-blocking, read in batches until EAGAIN into
// one reused buffer. The MTU is read from the device when it is opened, and
// the device's txqueuelen is raised (10000 by default): with the kernel's 500,
// packets towards a busy reader are dropped even on an idle machine.
//
// The device must exist or be creatable by this process (root or
// CAP_NET_ADMIN; scripts/tun.sh and tap.sh make persistent ones). Addresses
// and the link state are configured outside (scripts, `ip`), not here.
//
// The receive buffer holds 64 KiB, not one MTU: with `offload` (TUN only) the
// device runs with IFF_VNET_HDR, checksum offload, TSO4 and TSO6, so a read may be
// a GSO super-packet of up to 64 KiB. It is handed up whole, its checksum
// completed (the stack above takes segments larger than the MSS), and
// send_batch() merges runs of segments of one flow into TSO super-packets
// (see TsoBatcher): one read or write per up to 64 KiB instead of per MTU.
// Without `offload` the device's offloads are switched off, so a persistent
// device left with them by an earlier process hands us plain packets again.
//
// On a TAP device `offload` means less here: the offsets of the virtio-net
// header count from the Ethernet header, which is the owner's business
// (tinyrouter forwards super-frames with their header). Reads are handed up
// with their 10-byte header in front, untouched (a read shorter than it is
// dropped); send() writes a header of zeros in front, send_with_header()
// the caller's; send_batch() merges nothing.
//
// With `uring` (plain devices, no offload), send_batch() hands the batch to a
// UringWriter: still one write per packet, but one io_uring_enter per up to 64
// of them; and receive_batch() reads through a UringReader: one io_uring_enter
// of up to 64 READs into the reader's own buffers, handed up in order (each
// view valid during its call, as always; the buffers are reused only by the
// next enter). How many READs an enter arms follows the traffic: twice what
// the last batch found, at least kMinUringReads, and 64 again after a batch
// that came back full, so a quiet device does not pay for 64 READs that say
// EAGAIN. The writes of a send_batch() (its last up to 64) and the next READs
// share one io_uring_enter (UringReader::write_then_read): what the kernel
// answers to them, or sent meanwhile, is read ahead into the reader's buffers
// and handed up by the next receive_batch(), whose first enter that saves;
// next_deadline() is due while packets wait there, so an event loop does not
// sleep on them. Not while a receive_batch() runs (its packets live in those
// buffers) nor while read-ahead packets wait. When io_uring cannot be set up (no liburing in the
// build, the io_uring_disabled sysctl, seccomp, an old kernel) the device says so in one log line
// and uses write(2) and read(2); uring() and uring_reads() tell which.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/uio.h>

#include "io/adapter.hh"
#include "io/file_descriptor.hh"
#include "io/uring_reader.hh"
#include "io/uring_writer.hh"
#include "util/counters.hh"

namespace tinytcp::io {

struct KernelDeviceConfig {
  std::string name;             // e.g. "tun144"; empty: the kernel picks one
  uint32_t txqueuelen = 10000;  // 0: leave the device's queue length alone
  bool offload = false;         // IFF_VNET_HDR, checksum, TSO4 and TSO6 offload
  bool uring = false;           // without offload: send and receive batches through io_uring
};

enum class DeviceDrop {
  kReadError,       // read() failed other than EAGAIN
  kTooBig,          // send of a packet larger than mtu() (+ link header)
  kRejected,        // write() EINVAL: the kernel did not accept the packet
  kNoBuffers,       // write() EAGAIN/ENOBUFS
  kDeviceDown,      // write() EIO: the interface is down
  kWriteError,      // any other write error
  kBadVnetHeader,   // offload: read shorter than the virtio-net header, or its checksum
                    // field outside the packet
  kUnsupportedGso,  // offload: a GSO type other than TCPv4 and TCPv6 (never offered to the kernel)
  kCount,
};
const char* to_string(DeviceDrop drop);

// What the offload mode did (all zero without it).
struct OffloadStats {
  uint64_t super_packets_received = 0;  // reads that were GSO super-packets
  uint64_t checksums_completed = 0;     // packets whose checksum we completed
  uint64_t super_packets_sent = 0;      // TSO writes
  uint64_t segments_coalesced = 0;      // datagrams sent inside them
};

class KernelDevice : public DatagramAdapter {
 public:
  static constexpr size_t kReceiveBufferBytes = 65536;
  static constexpr size_t kMinUringReads = 4;  // READs an enter arms at least

  size_t receive_batch(const PacketHandler& on_packet, size_t max_packets) override;
  using DatagramAdapter::receive_batch;
  void send(std::string_view packet) override;
  // With offload: one packet (or GSO super-packet of up to 64 KiB) behind
  // `header` (VirtioNetHeader::kSize bytes, serialized).
  void send_with_header(const char* header, std::string_view packet);
  // With offload: runs of segments of one flow leave as TSO super-packets.
  void send_batch(const std::string_view* packets, size_t count) override;

  // Due at once while packets read ahead by send_batch() wait to be handed up.
  std::optional<Instant> next_deadline() const override;

  int fd() const override { return fd_.get(); }
  LinkType link_type() const override { return type_; }
  size_t mtu() const override { return mtu_; }
  const AdapterStats& stats() const override { return stats_; }
  const EnumCounters<DeviceDrop>& drops() const { return drops_; }
  bool offload() const { return offload_; }
  // send_batch() writes through io_uring (asked for, set up, and not broken).
  bool uring() const { return uring_ != nullptr && !uring_->broken(); }
  // io_uring_enter calls that submitted writes (0 without uring()), with or
  // without READs behind them.
  uint64_t uring_enters() const {
    return (uring_ ? uring_->enters() : 0) + (reader_ ? reader_->write_enters() : 0);
  }
  // receive_batch() reads through io_uring (asked for, set up, and not broken).
  bool uring_reads() const { return reader_ != nullptr && !reader_->broken(); }
  // io_uring_enter calls that submitted reads (0 without uring_reads()), also
  // those that carried writes in front.
  uint64_t uring_read_enters() const { return reader_ ? reader_->enters() : 0; }
  // Packets read ahead by send_batch()'s enters (handed up later).
  uint64_t packets_read_ahead() const { return packets_read_ahead_; }
  const OffloadStats& offload_stats() const { return offload_stats_; }

  // The interface name the kernel gave the device.
  const std::string& name() const { return name_; }
  uint32_t txqueuelen() const { return txqueuelen_; }
  // Reads the MTU from the device again (after `ip link set mtu`).
  void refresh_mtu();

 protected:
  // `flags`: IFF_TUN or IFF_TAP. Throws std::system_error naming the device.
  KernelDevice(const KernelDeviceConfig& config, short flags, LinkType type);
  // Bytes in front of the IP datagram on this link (14 for Ethernet).
  size_t link_header_bytes() const { return type_ == LinkType::kEthernet ? 14 : 0; }
  // An AF_INET datagram socket for interface ioctls.
  int control_socket() const { return control_.get(); }

 private:
  void drop(DeviceDrop reason);
  // Offload: checks and removes the virtio-net header of a read, completing
  // the checksum in place; false (dropped, counted) when it cannot.
  bool strip_virtio_net_header(std::string_view& packet);
  // Counts a failed write or writev by errno.
  void count_write_error(int error);
  // Counts one packet's write: sent, or failed (errno) and reported when the
  // device queue was full.
  void count_send(bool written, std::string_view packet);
  // One write of `parts` (the virtio-net header first with offload); false
  // with errno set when the kernel did not take it.
  bool write_parts(const struct iovec* parts, size_t count);
  // Sets up uring_ when asked for; one log line either way.
  void start_uring(const KernelDeviceConfig& config);
  // Plain send_batch() through uring_: one io_uring_enter per 64 packets.
  void send_batch_uring(const std::string_view* packets, size_t count);
  // Writes packets[0..count) (none too big) through uring_, the last up to 64
  // in front of READs when `read_ahead` and the reader is free.
  void write_run_uring(const std::string_view* packets, size_t count, bool read_ahead);
  // The WRITEs of packets[0..count) (at most 64) and READs in one enter; false
  // when the packets were not written (the caller writes them another way).
  bool write_and_read_ahead(const std::string_view* packets, size_t count);
  // receive_batch() through reader_: one io_uring_enter per batch of READs.
  size_t receive_batch_uring(const PacketHandler& on_packet, size_t max_packets);
  // Hands up READ `i` of the reader's last enter; false when it found the
  // device dry or failed (counted). `*got` counts the datagrams read.
  bool take_read(size_t i, const PacketHandler& on_packet, size_t* handed_up, size_t* got);
  // Counts one read datagram and hands it up; false when it was dropped.
  bool hand_up(std::string_view packet, const PacketHandler& on_packet);

  LinkType type_;
  FileDescriptor fd_;
  FileDescriptor control_;
  std::string name_;
  size_t mtu_ = 0;
  uint32_t txqueuelen_ = 0;
  AdapterStats stats_;
  EnumCounters<DeviceDrop> drops_;
  bool offload_ = false;
  OffloadStats offload_stats_;
  std::vector<char> buffer_;
  std::vector<struct iovec> iov_;  // scratch for TSO writes
  std::vector<char> tso_header_;
  std::unique_ptr<UringWriter> uring_;
  UringWriter::Done uring_done_;                     // counts one packet's result; set once
  const std::string_view* uring_packets_ = nullptr;  // the batch uring_done_ reports on
  std::unique_ptr<UringReader> reader_;
  size_t uring_reads_armed_ = UringReader::kEntries;  // READs the next first enter arms
  bool receiving_ = false;  // in receive_batch_uring(): the reader's buffers are in use
  bool read_ahead_ = true;  // writes ride with READs (off if the fd refuses RWF_NOWAIT)
  size_t ahead_next_ = 0;   // read-ahead READs [ahead_next_, ahead_end_) of the
  size_t ahead_end_ = 0;    // reader's last enter wait to be handed up
  uint64_t packets_read_ahead_ = 0;
  int write_results_[UringReader::kEntries] = {};
};

}  // namespace tinytcp::io

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
// The receive buffer holds 64 KiB, not one MTU: once the device runs with
// IFF_VNET_HDR a read is a GSO super-packet (TODO(#5 follow-up): offload).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/adapter.hh"
#include "io/file_descriptor.hh"
#include "util/counters.hh"

namespace tinytcp::io {

struct KernelDeviceConfig {
  std::string name;             // e.g. "tun144"; empty: the kernel picks one
  uint32_t txqueuelen = 10000;  // 0: leave the device's queue length alone
};

enum class DeviceDrop {
  kReadError,   // read() failed other than EAGAIN
  kTooBig,      // send of a packet larger than mtu() (+ link header)
  kRejected,    // write() EINVAL: the kernel did not accept the packet
  kNoBuffers,   // write() EAGAIN/ENOBUFS
  kDeviceDown,  // write() EIO: the interface is down
  kWriteError,  // any other write error
  kCount,
};
const char* to_string(DeviceDrop drop);

class KernelDevice : public DatagramAdapter {
 public:
  static constexpr size_t kReceiveBufferBytes = 65536;

  size_t receive_batch(const PacketHandler& on_packet, size_t max_packets) override;
  using DatagramAdapter::receive_batch;
  void send(std::string_view packet) override;

  int fd() const override { return fd_.get(); }
  LinkType link_type() const override { return type_; }
  size_t mtu() const override { return mtu_; }
  const AdapterStats& stats() const override { return stats_; }
  const EnumCounters<DeviceDrop>& drops() const { return drops_; }

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

  LinkType type_;
  FileDescriptor fd_;
  FileDescriptor control_;
  std::string name_;
  size_t mtu_ = 0;
  uint32_t txqueuelen_ = 0;
  AdapterStats stats_;
  EnumCounters<DeviceDrop> drops_;
  std::vector<char> buffer_;
};

}  // namespace tinytcp::io

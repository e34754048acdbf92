#pragma once

// A TUN device (IFF_TUN | IFF_NO_PI): the kernel routes IPv4 datagrams for the
// device's subnet to us and takes the datagrams we write as if they arrived on
// that interface. Link type raw IP; no ARP. See KernelDevice for the rest.
//
//   TunDevice tun("tun144");  // after scripts/tun.sh start 144

#include <string>

#include "io/kernel_device.hh"

namespace tinytcp::io {

class TunDevice : public KernelDevice {
 public:
  explicit TunDevice(const KernelDeviceConfig& config);
  explicit TunDevice(const std::string& name) : TunDevice(KernelDeviceConfig{name}) {}
};

}  // namespace tinytcp::io

#pragma once

// A TAP device (IFF_TAP | IFF_NO_PI): whole Ethernet frames, as if we were a
// host on the same segment as the kernel's interface. It only moves frames;
// ARP and the Ethernet header belong to net/'s NetworkInterface on top.
// mtu() is the IP MTU; a frame is up to mtu() + 14 bytes.
//
//   TapDevice tap("tap10");  // after scripts/tap.sh start 10

#include <array>
#include <cstdint>
#include <string>

#include "io/kernel_device.hh"

namespace tinytcp::io {

class TapDevice : public KernelDevice {
 public:
  explicit TapDevice(const KernelDeviceConfig& config);
  explicit TapDevice(const std::string& name) : TapDevice(KernelDeviceConfig{name}) {}

  // The MAC address of the kernel's side of the device (ours must differ).
  std::array<uint8_t, 6> kernel_mac() const;
};

}  // namespace tinytcp::io

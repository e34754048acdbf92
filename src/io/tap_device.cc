#include "io/tap_device.hh"

#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <cstring>

namespace tinytcp::io {

TapDevice::TapDevice(const KernelDeviceConfig& config)
    : KernelDevice(config, IFF_TAP, LinkType::kEthernet) {}

std::array<uint8_t, 6> TapDevice::kernel_mac() const {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name().c_str(), IFNAMSIZ - 1);
  if (::ioctl(control_socket(), SIOCGIFHWADDR, &ifr) < 0) {
    throw_errno("SIOCGIFHWADDR " + name());
  }
  std::array<uint8_t, 6> mac{};
  for (size_t i = 0; i < mac.size(); ++i) {
    mac[i] = static_cast<uint8_t>(ifr.ifr_hwaddr.sa_data[i]);
  }
  return mac;
}

}  // namespace tinytcp::io

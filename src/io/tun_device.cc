#include "io/tun_device.hh"

#include <linux/if_tun.h>

namespace tinytcp::io {

TunDevice::TunDevice(const KernelDeviceConfig& config)
    : KernelDevice(config, IFF_TUN, LinkType::kRawIp) {}

}  // namespace tinytcp::io

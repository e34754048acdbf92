#include "io/kernel_device.hh"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <system_error>

#include "io/tap_device.hh"
#include "io/tun_device.hh"
#include "io/virtio_net_header.hh"

// Opening real devices needs root: tests/integration/io_devices_test.cc. Here
// only what fails before the kernel is asked, and a TAP device with offload
// where it can be made (skipped otherwise).

namespace tinytcp::io {
namespace {

TEST(KernelDeviceTest, NameTooLongThrowsNamingTheDevice) {
  const std::string name(16, 'x');
  try {
    TunDevice tun(name);
    FAIL() << "no exception";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ENAMETOOLONG);
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(KernelDeviceTest, OffloadOnTapHandsReadsUpWithTheirHeader) {
  // TAP offload (tinyrouter): the header stays in front of the frame. Needs
  // /dev/net/tun and CAP_NET_ADMIN; the device goes away when closed.
  KernelDeviceConfig config{""};
  config.offload = true;
  config.txqueuelen = 0;
  std::unique_ptr<TapDevice> tap;
  try {
    tap = std::make_unique<TapDevice>(config);
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no TAP device here: " << e.what();
  }
  EXPECT_TRUE(tap->offload());
  EXPECT_EQ(tap->receive_batch([](std::string_view) {}, 8), 0u);  // nothing yet, no crash
  // Down: the write fails and is counted, with or without a header.
  const char header[VirtioNetHeader::kSize] = {};
  tap->send_with_header(header, std::string(60, '\0'));
  tap->send(std::string(60, '\0'));
  EXPECT_EQ(tap->stats().packets_sent + tap->stats().send_drops, 2u);
}

TEST(KernelDeviceTest, EveryDropHasAName) {
  for (size_t i = 0; i < static_cast<size_t>(DeviceDrop::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<DeviceDrop>(i)), "unknown");
  }
}

TEST(KernelDeviceTest, LinkTypesNamed) {
  EXPECT_STREQ(to_string(LinkType::kRawIp), "raw-ip");
  EXPECT_STREQ(to_string(LinkType::kEthernet), "ethernet");
}

}  // namespace
}  // namespace tinytcp::io

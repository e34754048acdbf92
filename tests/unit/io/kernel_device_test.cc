#include "io/kernel_device.hh"

#include <gtest/gtest.h>

#include <system_error>

#include "io/tap_device.hh"
#include "io/tun_device.hh"

// Opening real devices needs root: tests/integration/io_devices_test.cc. Here
// only what fails before the kernel is asked.

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

TEST(KernelDeviceTest, OffloadOnTapIsRefusedBeforeOpening) {
  KernelDeviceConfig config{"tap0"};
  config.offload = true;
  try {
    TapDevice tap(config);
    FAIL() << "no exception";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EINVAL);
    EXPECT_NE(std::string(e.what()).find("TUN devices only"), std::string::npos) << e.what();
  }
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

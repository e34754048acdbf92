// RuntimeOptions::take_device_suffixes: "+offload", "+nooffload", "+uring" and
// "+nouring" at the end of --dev, in any order.

#include <gtest/gtest.h>

#include <string>

#include "runtime/stack_runtime.hh"

namespace tinytcp::runtime {
namespace {

using Offload = RuntimeOptions::Offload;
using Uring = RuntimeOptions::Uring;

RuntimeOptions with_dev(std::string dev) {
  RuntimeOptions o;
  o.dev = std::move(dev);
  o.take_device_suffixes();
  return o;
}

TEST(DeviceSuffixesTest, ANameWithoutSuffixesIsLeftAlone) {
  const auto o = with_dev("tun144");
  EXPECT_EQ(o.dev, "tun144");
  EXPECT_EQ(o.offload, Offload::kAuto);
  EXPECT_EQ(o.uring, Uring::kAuto);
}

TEST(DeviceSuffixesTest, EachSuffixSetsItsOption) {
  EXPECT_EQ(with_dev("tun144+offload").offload, Offload::kOn);
  EXPECT_EQ(with_dev("tun144+nooffload").offload, Offload::kOff);
  const auto o = with_dev("tap10+uring");
  EXPECT_EQ(o.dev, "tap10");
  EXPECT_EQ(o.uring, Uring::kOn);
  EXPECT_EQ(o.offload, Offload::kAuto);
  const auto off = with_dev("tun144+nouring");
  EXPECT_EQ(off.dev, "tun144");
  EXPECT_EQ(off.uring, Uring::kOff);
}

TEST(DeviceSuffixesTest, SuffixesComeOffInAnyOrder) {
  for (const char* dev : {"tun144+uring+offload", "tun144+offload+uring"}) {
    const auto o = with_dev(dev);
    EXPECT_EQ(o.dev, "tun144") << dev;
    EXPECT_EQ(o.uring, Uring::kOn) << dev;
    EXPECT_EQ(o.offload, Offload::kOn) << dev;
  }
  const auto o = with_dev("tun144+nouring+nooffload");
  EXPECT_EQ(o.dev, "tun144");
  EXPECT_EQ(o.uring, Uring::kOff);
  EXPECT_EQ(o.offload, Offload::kOff);
}

TEST(DeviceSuffixesTest, OnlyTheEndCountsAndANameStays) {
  const auto middle = with_dev("tun+uring144");  // not at the end: part of the name
  EXPECT_EQ(middle.dev, "tun+uring144");
  EXPECT_EQ(middle.uring, Uring::kAuto);
  const auto bare = with_dev("+uring");  // nothing before it: left as the name
  EXPECT_EQ(bare.dev, "+uring");
  EXPECT_EQ(bare.uring, Uring::kAuto);
}

}  // namespace
}  // namespace tinytcp::runtime

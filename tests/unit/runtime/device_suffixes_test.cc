// RuntimeOptions::take_device_suffixes: "+offload", "+nooffload" and "+uring"
// at the end of --dev, in any order.

#include <gtest/gtest.h>

#include <string>

#include "runtime/stack_runtime.hh"

namespace tinytcp::runtime {
namespace {

using Offload = RuntimeOptions::Offload;

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
  EXPECT_FALSE(o.uring);
}

TEST(DeviceSuffixesTest, EachSuffixSetsItsOption) {
  EXPECT_EQ(with_dev("tun144+offload").offload, Offload::kOn);
  EXPECT_EQ(with_dev("tun144+nooffload").offload, Offload::kOff);
  const auto o = with_dev("tap10+uring");
  EXPECT_EQ(o.dev, "tap10");
  EXPECT_TRUE(o.uring);
  EXPECT_EQ(o.offload, Offload::kAuto);
}

TEST(DeviceSuffixesTest, SuffixesComeOffInAnyOrder) {
  for (const char* dev : {"tun144+uring+offload", "tun144+offload+uring"}) {
    const auto o = with_dev(dev);
    EXPECT_EQ(o.dev, "tun144") << dev;
    EXPECT_TRUE(o.uring) << dev;
    EXPECT_EQ(o.offload, Offload::kOn) << dev;
  }
}

TEST(DeviceSuffixesTest, OnlyTheEndCountsAndANameStays) {
  const auto middle = with_dev("tun+uring144");  // not at the end: part of the name
  EXPECT_EQ(middle.dev, "tun+uring144");
  EXPECT_FALSE(middle.uring);
  const auto bare = with_dev("+uring");  // nothing before it: left as the name
  EXPECT_EQ(bare.dev, "+uring");
  EXPECT_FALSE(bare.uring);
}

}  // namespace
}  // namespace tinytcp::runtime

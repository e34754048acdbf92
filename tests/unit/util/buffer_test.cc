#include "util/buffer.hh"

#include <gtest/gtest.h>

#include <string>

namespace tinytcp {
namespace {

TEST(BufferReaderTest, ReadsBigEndianFields) {
  const std::string data{"\x01\x02\x03\x04\x05\x06\x07\x08\x09", 9};
  BufferReader r(data);
  EXPECT_EQ(r.u8(), 0x01);
  EXPECT_EQ(r.u16(), 0x0203);
  EXPECT_EQ(r.u32(), 0x04050607u);
  EXPECT_EQ(r.bytes(2), std::string_view("\x08\x09", 2));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(BufferReaderTest, OverrunIsStickyAndReturnsZero) {
  const std::string data{"\xff\xff\xff", 3};
  BufferReader r(data);
  EXPECT_EQ(r.u32(), 0u);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.u8(), 0u);  // even though a byte would fit, the error sticks
  EXPECT_TRUE(r.bytes(1).empty());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(BufferReaderTest, EveryTruncationFails) {
  const std::string data{"\x01\x02\x03\x04\x05\x06\x07", 7};
  for (size_t len = 0; len < data.size(); ++len) {
    BufferReader r(std::string_view(data).substr(0, len));
    r.u8();
    r.u16();
    r.u32();
    EXPECT_FALSE(r.ok()) << len;
  }
}

TEST(BufferWriterTest, WritesAndPatches) {
  char buf[8];
  BufferWriter w(buf, sizeof buf);
  w.u8(0xab);
  w.u16(0x0102);
  w.u32(0x03040506);
  w.patch_u16(1, 0xbeef);
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(w.written(), std::string_view("\xab\xbe\xef\x03\x04\x05\x06", 7));
}

TEST(BufferWriterTest, OverflowWritesNothingAndSticks) {
  char buf[3] = {'x', 'x', 'x'};
  BufferWriter w(buf, sizeof buf);
  w.u16(0x0102);
  w.u16(0x0304);  // does not fit
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.size(), 2u);
  EXPECT_EQ(buf[2], 'x');
  w.u8(1);  // would fit, but the error sticks
  EXPECT_EQ(w.size(), 2u);
}

TEST(BufferWriterTest, PatchOutsideWrittenFails) {
  char buf[4];
  BufferWriter w(buf, sizeof buf);
  w.u8(1);
  w.patch_u16(0, 7);
  EXPECT_FALSE(w.ok());
}

}  // namespace
}  // namespace tinytcp

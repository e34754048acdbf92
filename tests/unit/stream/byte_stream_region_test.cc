// ByteStream::write_region / commit_region: the writer fills the free room in
// place (tt-serve preads a file straight into the send buffer).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "stream/byte_stream.hh"

namespace tinytcp::stream {
namespace {

std::string read_all(ByteStream& s) {
  std::string out;
  while (s.bytes_buffered() > 0) {
    const auto v = s.peek();
    out.append(v);
    s.pop(v.size());
  }
  return out;
}

// Copies `data` into `r` as a pread/preadv would: `first`, then `second`.
void fill(const WriteRegion& r, std::string_view data) {
  ASSERT_LE(data.size(), r.size());
  const size_t a = std::min<size_t>(data.size(), r.first_size);
  std::memcpy(r.first, data.data(), a);
  if (data.size() > a) {
    std::memcpy(r.second, data.data() + a, data.size() - a);
  }
}

TEST(ByteStreamRegionTest, RegionIsBoundedByMaxAndCapacity) {
  ByteStream s(10);
  EXPECT_EQ(s.write_region(4).size(), 4u);
  EXPECT_EQ(s.write_region(100).size(), 10u);
  s.push("abcdefg");
  const WriteRegion r = s.write_region(100);
  EXPECT_EQ(r.size(), 3u);
  EXPECT_EQ(r.second_size, 0u);
}

TEST(ByteStreamRegionTest, CommitMakesTheFilledBytesReadable) {
  ByteStream s(16);
  s.push("ab");
  const WriteRegion r = s.write_region(8);
  fill(r, "cdef");
  EXPECT_TRUE(s.commit_region(4));
  EXPECT_EQ(s.bytes_pushed(), 6u);
  EXPECT_EQ(s.bytes_buffered(), 6u);
  EXPECT_EQ(s.available_capacity(), 10u);
  EXPECT_EQ(read_all(s), "abcdef");
}

TEST(ByteStreamRegionTest, RegionWrapsIntoTwoSpans) {
  ByteStream s(8, 8);
  s.push("012345");
  s.pop(4);  // head at 4, "45" buffered, write end at 6
  const WriteRegion r = s.write_region(100);
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r.first_size, 2u);
  EXPECT_EQ(r.second_size, 4u);
  fill(r, "6789AB");
  EXPECT_TRUE(s.commit_region(6));
  EXPECT_EQ(s.available_capacity(), 0u);
  EXPECT_EQ(read_all(s), "456789AB");
}

TEST(ByteStreamRegionTest, RegionGrowsTheRingAndKeepsTheBufferedBytes) {
  ByteStream s(64, 8);
  s.push("0123456");
  s.pop(5);
  s.push("789ab");  // wrapped in the 8-byte ring: head 5, "56789ab"
  const WriteRegion r = s.write_region(20);
  ASSERT_EQ(r.size(), 20u);
  fill(r, "cdefghijklmnopqrstuv");
  EXPECT_TRUE(s.commit_region(20));
  EXPECT_EQ(read_all(s), "56789abcdefghijklmnopqrstuv");
}

TEST(ByteStreamRegionTest, CommitOfZeroChangesNothing) {
  ByteStream s(8);
  s.write_region(8);
  EXPECT_TRUE(s.commit_region(0));
  EXPECT_TRUE(s.commit_region(0));  // also without a region
  EXPECT_EQ(s.bytes_pushed(), 0u);
  EXPECT_EQ(s.available_capacity(), 8u);
}

TEST(ByteStreamRegionTest, CommitBeyondTheRegionIsRefused) {
  ByteStream s(8);
  const WriteRegion r = s.write_region(3);
  fill(r, "abc");
  EXPECT_FALSE(s.commit_region(4));
  EXPECT_EQ(s.bytes_pushed(), 0u);
  EXPECT_TRUE(s.commit_region(3));
  EXPECT_FALSE(s.commit_region(1));  // a region commits once
  EXPECT_EQ(read_all(s), "abc");
}

TEST(ByteStreamRegionTest, AWriteOrPopInBetweenVoidsTheRegion) {
  ByteStream s(8);
  s.write_region(4);
  s.push("x");
  EXPECT_FALSE(s.commit_region(1));
  s.write_region(4);
  s.pop(1);  // the stream empties and restarts at the front
  EXPECT_FALSE(s.commit_region(1));
  EXPECT_EQ(s.bytes_pushed(), 1u);
}

TEST(ByteStreamRegionTest, NoRegionOnAClosedOrErroredStream) {
  ByteStream s(8);
  s.write_region(4);
  s.close();
  EXPECT_FALSE(s.commit_region(1));
  EXPECT_EQ(s.write_region(4).size(), 0u);
  ByteStream e(8);
  e.set_error();
  EXPECT_EQ(e.write_region(4).size(), 0u);
}

TEST(ByteStreamRegionTest, NoRegionWhileBytesWaitAhead) {
  ByteStream s(8);
  s.write_ahead(2, "cd");
  EXPECT_EQ(s.write_region(4).size(), 0u);
  s.write_ahead(0, "ab");
  s.commit(4);
  EXPECT_EQ(s.write_region(8).size(), 4u);
}

}  // namespace
}  // namespace tinytcp::stream

#include "stack/tcp_codec.hh"

#include <gtest/gtest.h>

#include <string>

#include "util/random.hh"

namespace tinytcp::stack {
namespace {

constexpr uint32_t kSrcIp = 0x0a000001;
constexpr uint32_t kDstIp = 0x0a000002;

tcp::TcpSegment full_segment() {
  tcp::TcpSegment s;
  s.seqno = tcp::Wrap32{0xfffffffe};
  s.ackno = tcp::Wrap32{42};
  s.ack = true;
  s.psh = true;
  s.fin = true;
  s.window = 4321;
  s.options.timestamps = tcp::Timestamps{7, 9};
  s.options.sack_count = 2;
  s.options.sack[0] = {tcp::Wrap32{100}, tcp::Wrap32{200}};
  s.options.sack[1] = {tcp::Wrap32{300}, tcp::Wrap32{400}};
  s.payload = "hello";
  return s;
}

void expect_same(const tcp::TcpSegment& a, const tcp::TcpSegment& b) {
  EXPECT_EQ(a.seqno, b.seqno);
  EXPECT_EQ(a.ackno, b.ackno);
  EXPECT_EQ(a.syn, b.syn);
  EXPECT_EQ(a.ack, b.ack);
  EXPECT_EQ(a.fin, b.fin);
  EXPECT_EQ(a.rst, b.rst);
  EXPECT_EQ(a.psh, b.psh);
  EXPECT_EQ(a.urg, b.urg);
  EXPECT_EQ(a.window, b.window);
  EXPECT_EQ(a.urgent_pointer, b.urgent_pointer);
  EXPECT_EQ(a.options.mss, b.options.mss);
  EXPECT_EQ(a.options.window_scale, b.options.window_scale);
  EXPECT_EQ(a.options.sack_permitted, b.options.sack_permitted);
  ASSERT_EQ(a.options.timestamps.has_value(), b.options.timestamps.has_value());
  if (a.options.timestamps) {
    EXPECT_EQ(a.options.timestamps->value, b.options.timestamps->value);
    EXPECT_EQ(a.options.timestamps->echo_reply, b.options.timestamps->echo_reply);
  }
  ASSERT_EQ(a.options.sack_count, b.options.sack_count);
  for (size_t i = 0; i < a.options.sack_count; ++i) {
    EXPECT_EQ(a.options.sack[i], b.options.sack[i]);
  }
  EXPECT_EQ(a.payload, b.payload);
}

std::string serialize(const tcp::TcpSegment& s) {
  std::string buffer(wire::TcpHeader::kMaxSize + s.payload.size(), '\0');
  BufferWriter out(buffer.data(), buffer.size());
  EXPECT_TRUE(serialize_segment(s, 1234, 80, kSrcIp, kDstIp, out));
  buffer.resize(out.size());
  return buffer;
}

TEST(TcpCodecTest, HeaderFieldsMapOneToOne) {
  const auto h = to_header(full_segment(), 1234, 80);
  EXPECT_EQ(h.src_port, 1234);
  EXPECT_EQ(h.dst_port, 80);
  EXPECT_EQ(h.seqno, 0xfffffffeu);
  EXPECT_EQ(h.ackno, 42u);
  EXPECT_TRUE(h.ack && h.psh && h.fin);
  EXPECT_EQ(h.window, 4321);
  ASSERT_TRUE(h.timestamps);
  EXPECT_EQ(h.timestamps->value, 7u);
  EXPECT_EQ(h.sack_count, 2);
  EXPECT_EQ(h.sack[1], (wire::TcpSackBlock{300, 400}));
}

TEST(TcpCodecTest, SegmentRoundTripsThroughTheWire) {
  const auto original = full_segment();
  const std::string bytes = serialize(original);
  const auto view = wire::parse_tcp(bytes, kSrcIp, kDstIp);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->header.src_port, 1234);
  expect_same(to_segment(*view), original);
}

TEST(TcpCodecTest, SynOptionsRoundTrip) {
  tcp::TcpSegment s;
  s.syn = true;
  s.seqno = tcp::Wrap32{1};
  s.window = 65535;
  s.options.mss = 1460;
  s.options.window_scale = 7;
  s.options.sack_permitted = true;
  s.options.timestamps = tcp::Timestamps{123, 0};
  const std::string bytes = serialize(s);
  const auto view = wire::parse_tcp(bytes, kSrcIp, kDstIp);
  ASSERT_TRUE(view);
  expect_same(to_segment(*view), s);
}

TEST(TcpCodecTest, RandomSegmentsRoundTrip) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 99);
  Rng rng(seed);
  for (int i = 0; i < 1000; ++i) {
    tcp::TcpSegment s;
    s.seqno = tcp::Wrap32{static_cast<uint32_t>(rng.next())};
    s.ackno = tcp::Wrap32{static_cast<uint32_t>(rng.next())};
    s.ack = rng.chance(0.5);
    s.rst = rng.chance(0.2);
    s.syn = rng.chance(0.3);
    s.fin = !s.syn && rng.chance(0.3);
    s.window = static_cast<uint16_t>(rng.next());
    if (rng.chance(0.5)) {
      s.options.timestamps = tcp::Timestamps{static_cast<uint32_t>(rng.next()), 5};
    }
    s.options.sack_count = static_cast<uint8_t>(rng.uniform(0, s.options.timestamps ? 3 : 4));
    for (size_t b = 0; b < s.options.sack_count; ++b) {
      s.options.sack[b] = {tcp::Wrap32{static_cast<uint32_t>(rng.next())},
                           tcp::Wrap32{static_cast<uint32_t>(rng.next())}};
    }
    const std::string payload = rng.bytes(rng.uniform(0, 100));
    s.payload = payload;
    const std::string bytes = serialize(s);
    const auto view = wire::parse_tcp(bytes, kSrcIp, kDstIp);
    ASSERT_TRUE(view) << "seed " << seed;
    expect_same(to_segment(*view), s);
  }
}

}  // namespace
}  // namespace tinytcp::stack

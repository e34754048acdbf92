#include "net/icmpv6_responder.hh"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "util/buffer.hh"
#include "wire/ipv6_chain.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using wire::Icmpv6Message;
using wire::Ipv6Address;
namespace icmpv6 = wire::icmpv6;

Ipv6Address addr(const char* text) {
  return Ipv6Address::parse(text).value();
}

// An IPv6 datagram from `src` to `dst` whose fixed header names `first` as
// the Next Header of `payload`.
std::string datagram(const char* src, const char* dst, uint8_t first, const std::string& payload) {
  wire::Ipv6Header h;
  h.payload_length = static_cast<uint16_t>(payload.size());
  h.next_header = first;
  h.src = addr(src);
  h.dst = addr(dst);
  std::string out(wire::Ipv6Header::kSize, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(h, w);
  return out + payload;
}

std::string icmpv6_bytes(const Icmpv6Message& m, const char* src, const char* dst) {
  std::string out(Icmpv6Message::kHeaderSize + m.data.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(m, addr(src), addr(dst), w);
  return out;
}

std::string udp_datagram(const char* src, const char* dst, size_t n = 16) {
  return datagram(src, dst, wire::ipv6::kUdp, std::string(n, 'u'));
}

std::string icmpv6_datagram(uint8_t type, const char* src, const char* dst) {
  return datagram(src, dst, wire::ipv6::kIcmpv6,
                  icmpv6_bytes(Icmpv6Message{type, 0, 0, 0, "data"}, src, dst));
}

class Icmpv6ResponderTest : public ::testing::Test {
 protected:
  // An error about `d`; returns the ICMPv6 message sent, if any.
  std::optional<Icmpv6Message> error_about(const std::string& d,
                                           uint8_t type = icmpv6::kDestinationUnreachable,
                                           uint8_t code = icmpv6::kPortUnreachable,
                                           uint32_t rest = 0, bool link_multicast = false) {
    const auto parsed = wire::parse_ipv6(d);
    EXPECT_TRUE(parsed);
    out_ = std::string(responder_.error(type, code, rest, *parsed, d, us_, now_, link_multicast));
    if (out_.empty()) {
      return std::nullopt;
    }
    const auto v = wire::parse_ipv6(out_);
    EXPECT_TRUE(v);
    EXPECT_EQ(v->header.src, us_);
    EXPECT_EQ(v->header.dst, parsed->header.src);
    EXPECT_EQ(v->header.next_header, wire::ipv6::kIcmpv6);
    EXPECT_EQ(v->header.hop_limit, 64);
    EXPECT_LE(out_.size(), wire::ipv6::kMinimumMtu);
    const auto m = wire::parse_icmpv6(v->payload, v->header.src, v->header.dst);
    EXPECT_TRUE(m);
    return m ? std::optional<Icmpv6Message>(*m) : std::nullopt;
  }
  uint64_t suppressed(Icmpv6Suppressed s) const { return responder_.stats().suppressed[s]; }

  Instant now_;
  Ipv6Address us_ = addr("fd00::1");
  Icmpv6Responder responder_{Icmpv6Responder::Config{10, 3, 64}};
  std::string out_;
};

TEST_F(Icmpv6ResponderTest, ErrorQuotesTheWholeSmallPacket) {
  const auto d = udp_datagram("fd00::2", "fd00::1");
  const auto m = error_about(d, icmpv6::kDestinationUnreachable, icmpv6::kPortUnreachable);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, icmpv6::kDestinationUnreachable);
  EXPECT_EQ(m->code, icmpv6::kPortUnreachable);
  EXPECT_EQ(m->rest, 0u);
  EXPECT_EQ(m->data, d);
  EXPECT_EQ(responder_.stats().errors, 1u);
}

TEST_F(Icmpv6ResponderTest, ErrorQuoteFitsTheMinimumMtu) {
  const auto d = udp_datagram("fd00::2", "fd00::1", 3000);
  const auto m = error_about(d, icmpv6::kTimeExceeded, icmpv6::kHopLimitExceeded);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->data, d.substr(0, icmpv6::kMaxQuote));
  EXPECT_EQ(out_.size(), wire::ipv6::kMinimumMtu);
}

TEST_F(Icmpv6ResponderTest, ErrorQuoteStopsAtThePacketNotItsPadding) {
  const auto d = udp_datagram("fd00::2", "fd00::1", 4);
  const auto m = error_about(d + std::string(10, '\0'));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->data, d);
}

TEST_F(Icmpv6ResponderTest, PacketTooBigAndParameterProblemCarryTheirWord) {
  const auto d = udp_datagram("fd00::2", "fd00::9");
  auto m = error_about(d, icmpv6::kPacketTooBig, 0, 1400);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->mtu(), 1400u);
  m = error_about(d, icmpv6::kParameterProblem, icmpv6::kErroneousHeaderField, 4);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pointer(), 4u);
}

TEST_F(Icmpv6ResponderTest, NoErrorAboutAnIcmpv6Error) {
  for (const uint8_t t : {icmpv6::kDestinationUnreachable, icmpv6::kPacketTooBig,
                          icmpv6::kTimeExceeded, icmpv6::kParameterProblem, uint8_t{100}}) {
    EXPECT_FALSE(error_about(icmpv6_datagram(t, "fd00::2", "fd00::1"))) << int{t};
  }
  // An ICMPv6 header cut short: not known to be no error.
  EXPECT_FALSE(error_about(datagram("fd00::2", "fd00::1", wire::ipv6::kIcmpv6, "")));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::AboutIcmpv6Error), 6u);
  EXPECT_EQ(responder_.stats().errors, 0u);
}

TEST_F(Icmpv6ResponderTest, NoErrorAboutAnIcmpv6ErrorBehindExtensionHeaders) {
  // Hop-by-hop (PadN) then a fragment header (offset 0, more) then ICMPv6.
  std::string hbh{static_cast<char>(wire::ipv6::kFragment), 0, 1, 4, 0, 0, 0, 0};
  std::string frag(8, '\0');
  BufferWriter w(frag.data(), frag.size());
  serialize(wire::Ipv6FragmentHeader{wire::ipv6::kIcmpv6, 0, true, 9}, w);
  const auto icmp =
      icmpv6_bytes(Icmpv6Message{icmpv6::kTimeExceeded, 0, 0, 0, "xxxxxxxx"}, "fd00::2", "fd00::1");
  EXPECT_FALSE(
      error_about(datagram("fd00::2", "fd00::1", wire::ipv6::kHopByHop, hbh + frag + icmp)));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::AboutIcmpv6Error), 1u);
}

TEST_F(Icmpv6ResponderTest, NoErrorAboutARedirect) {
  EXPECT_FALSE(error_about(icmpv6_datagram(icmpv6::kRedirect, "fe80::2", "fe80::1")));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::AboutRedirect), 1u);
}

TEST_F(Icmpv6ResponderTest, ErrorAboutAnEchoOrNdpIsAllowed) {
  EXPECT_TRUE(error_about(icmpv6_datagram(icmpv6::kEchoRequest, "fd00::2", "fd00::1")));
  EXPECT_TRUE(error_about(icmpv6_datagram(icmpv6::kNeighborSolicitation, "fd00::2", "fd00::1"),
                          icmpv6::kParameterProblem, icmpv6::kErroneousHeaderField));
}

TEST_F(Icmpv6ResponderTest, NoErrorToANonUnicastSource) {
  EXPECT_FALSE(error_about(udp_datagram("::", "fd00::1")));
  EXPECT_FALSE(error_about(udp_datagram("ff02::1", "fd00::1")));
  EXPECT_FALSE(error_about(udp_datagram("::1", "fd00::1")));
  // Not even the §2.4(e) exceptions.
  EXPECT_FALSE(error_about(udp_datagram("::", "fd00::1"), icmpv6::kPacketTooBig, 0, 1280));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::AboutNonUnicastSource), 4u);
}

TEST_F(Icmpv6ResponderTest, NoErrorAboutAPacketToMulticast) {
  const auto d = udp_datagram("fd00::2", "ff02::1");
  EXPECT_FALSE(error_about(d, icmpv6::kDestinationUnreachable, icmpv6::kPortUnreachable));
  EXPECT_FALSE(error_about(d, icmpv6::kTimeExceeded, icmpv6::kHopLimitExceeded));
  EXPECT_FALSE(error_about(d, icmpv6::kParameterProblem, icmpv6::kErroneousHeaderField));
  EXPECT_FALSE(error_about(d, icmpv6::kParameterProblem, icmpv6::kUnrecognizedNextHeader));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::AboutMulticast), 4u);
}

TEST_F(Icmpv6ResponderTest, MulticastExceptionsPacketTooBigAndUnrecognizedOption) {
  const auto d = udp_datagram("fd00::2", "ff0e::1:2");
  EXPECT_TRUE(error_about(d, icmpv6::kPacketTooBig, 0, 1280));
  EXPECT_TRUE(error_about(d, icmpv6::kParameterProblem, icmpv6::kUnrecognizedOption, 42));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::AboutMulticast), 0u);
}

TEST_F(Icmpv6ResponderTest, NoErrorAboutALinkLayerMulticastFrameButTheExceptions) {
  const auto d = udp_datagram("fd00::2", "fd00::1");
  EXPECT_FALSE(error_about(d, icmpv6::kDestinationUnreachable, icmpv6::kPortUnreachable, 0, true));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::AboutLinkMulticast), 1u);
  EXPECT_TRUE(error_about(d, icmpv6::kPacketTooBig, 0, 1280, true));
  EXPECT_TRUE(error_about(d, icmpv6::kParameterProblem, icmpv6::kUnrecognizedOption, 42, true));
}

TEST_F(Icmpv6ResponderTest, TokenBucketRefillsWithTime) {
  const auto d = udp_datagram("fd00::2", "fd00::1");
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(error_about(d)) << i;
  }
  EXPECT_FALSE(error_about(d));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::RateLimited), 1u);
  now_ += 100ms;  // 10/s: one token
  EXPECT_TRUE(error_about(d));
  EXPECT_FALSE(error_about(d));
  now_ += 10s;  // refills only up to the burst
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(error_about(d)) << i;
  }
  EXPECT_FALSE(error_about(d));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::RateLimited), 3u);
  EXPECT_EQ(responder_.stats().errors, 7u);
}

TEST_F(Icmpv6ResponderTest, RefusedErrorsTakeNoToken) {
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(error_about(udp_datagram("fd00::2", "ff02::1")));
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(error_about(udp_datagram("fd00::2", "fd00::1"))) << i;
  }
}

class Icmpv6EchoTest : public Icmpv6ResponderTest {
 protected:
  std::optional<Icmpv6Message> reply_to(const char* src, const char* dst) {
    const auto d = datagram(
        src, dst, wire::ipv6::kIcmpv6,
        icmpv6_bytes(Icmpv6Message::echo(icmpv6::kEchoRequest, 0xbeef, 42, "abc"), src, dst));
    const auto request = wire::parse_ipv6(d);
    const auto m = wire::parse_icmpv6(request->payload, request->header.src, request->header.dst);
    EXPECT_TRUE(m);
    out_ = std::string(responder_.echo_reply(*request, *m, us_));
    if (out_.empty()) {
      return std::nullopt;
    }
    const auto v = wire::parse_ipv6(out_);
    EXPECT_TRUE(v);
    EXPECT_EQ(v->header.src, us_);
    EXPECT_EQ(v->header.dst, addr(src));
    const auto r = wire::parse_icmpv6(v->payload, v->header.src, v->header.dst);
    EXPECT_TRUE(r);
    return r ? std::optional<Icmpv6Message>(*r) : std::nullopt;
  }
};

TEST_F(Icmpv6EchoTest, ReplyMirrorsTheRequest) {
  const auto r = reply_to("fd00::2", "fd00::1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->type, icmpv6::kEchoReply);
  EXPECT_EQ(r->code, 0);
  EXPECT_EQ(r->echo_id(), 0xbeef);
  EXPECT_EQ(r->echo_sequence(), 42);
  EXPECT_EQ(r->data, "abc");
  EXPECT_EQ(responder_.stats().echo_replies, 1u);
}

TEST_F(Icmpv6EchoTest, RequestToMulticastGetsAUnicastReply) {
  ASSERT_TRUE(reply_to("fd00::2", "ff02::1"));
}

TEST_F(Icmpv6EchoTest, NoReplyToANonUnicastSource) {
  EXPECT_FALSE(reply_to("::", "fd00::1"));
  EXPECT_FALSE(reply_to("ff02::1", "fd00::1"));
  EXPECT_EQ(suppressed(Icmpv6Suppressed::EchoFromNonUnicast), 2u);
  EXPECT_EQ(responder_.stats().echo_replies, 0u);
}

TEST_F(Icmpv6EchoTest, LargeEchoIsRepliedWhole) {
  const std::string data(5000, 'e');
  const auto d = datagram(
      "fd00::2", "fd00::1", wire::ipv6::kIcmpv6,
      icmpv6_bytes(Icmpv6Message::echo(icmpv6::kEchoRequest, 1, 2, data), "fd00::2", "fd00::1"));
  const auto request = wire::parse_ipv6(d);
  const auto m = wire::parse_icmpv6(request->payload, request->header.src, request->header.dst);
  const auto reply = responder_.echo_reply(*request, *m, us_);
  EXPECT_EQ(reply.size(), d.size());
}

}  // namespace
}  // namespace tinytcp::net

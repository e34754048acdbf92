#include "wire/icmpv6.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/wire/test_bytes.hh"

namespace tinytcp::wire {
namespace {

using test::from_hex;

Ipv6Address addr(const char* text) {
  return Ipv6Address::parse(text).value();
}

const Ipv6Address kA = addr("fd00::1");
const Ipv6Address kB = addr("fd00::2");
const Ipv6Address kRouter = addr("fd00::ff");

// scapy: IPv6(src="fd00::1", dst="fd00::2") / ICMPv6EchoRequest(id=0x1234,
// seq=1, data=b"abcd"), and the reply from fd00::2: ICMPv6 bytes only.
const std::string kEchoRequest = from_hex("8000 aeb8 1234 0001 6162 6364");
const std::string kEchoReply = from_hex("8100 adb8 1234 0001 6162 6364");

// The packet the errors below quote: IPv6(src="fd00::1", dst="fd00::2") /
// TCP(sport=40000, dport=80, flags="A", seq=1000, ack=5) / b"z" * 12.
const std::string kInvoking = from_hex(
    "6000 0000 0020 0640 fd00 0000 0000 0000 0000 0000 0000 0001 fd00 0000 0000 0000 0000 0000 "
    "0000 0002 9c40 0050 0000 03e8 0000 0005 5010 2000 1668 0000 7a7a 7a7a 7a7a 7a7a 7a7a 7a7a");
// scapy: IPv6(src="fd00::ff", dst="fd00::1") / <error> / kInvoking: the
// ICMPv6 header of each (the quote follows).
const std::string kPacketTooBig = from_hex("0200 9739 0000 0500");      // mtu=1280
const std::string kParameterProblem = from_hex("0401 9a10 0000 0028");  // code=1, ptr=40
const std::string kTimeExceeded = from_hex("0300 9b39 0000 0000");      // code=0
const std::string kUnreachable = from_hex("0104 9d35 0000 0000");       // code=4 (port)

std::string serialize_icmpv6(const Icmpv6Message& m, const Ipv6Address& src,
                             const Ipv6Address& dst) {
  std::string out(Icmpv6Message::kHeaderSize + m.data.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(m, src, dst, w);
  EXPECT_TRUE(w.ok());
  return out;
}

TEST(Icmpv6Test, ParsesGoldenEcho) {
  const auto m = parse_icmpv6(kEchoRequest, kA, kB);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, icmpv6::kEchoRequest);
  EXPECT_EQ(m->code, 0);
  EXPECT_EQ(m->checksum, 0xaeb8);
  EXPECT_EQ(m->echo_id(), 0x1234);
  EXPECT_EQ(m->echo_sequence(), 1);
  EXPECT_EQ(m->data, "abcd");
  EXPECT_FALSE(m->is_error());
  const auto r = parse_icmpv6(kEchoReply, kB, kA);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->type, icmpv6::kEchoReply);
}

TEST(Icmpv6Test, SerializesGoldenEcho) {
  EXPECT_EQ(serialize_icmpv6(Icmpv6Message::echo(icmpv6::kEchoRequest, 0x1234, 1, "abcd"), kA, kB),
            kEchoRequest);
  EXPECT_EQ(serialize_icmpv6(Icmpv6Message::echo(icmpv6::kEchoReply, 0x1234, 1, "abcd"), kB, kA),
            kEchoReply);
}

TEST(Icmpv6Test, SerializesGoldenErrors) {
  struct Case {
    uint8_t type;
    uint8_t code;
    uint32_t rest;
    const std::string& golden;
  };
  const Case cases[] = {
      {icmpv6::kPacketTooBig, 0, 1280, kPacketTooBig},
      {icmpv6::kParameterProblem, icmpv6::kUnrecognizedNextHeader, 40, kParameterProblem},
      {icmpv6::kTimeExceeded, icmpv6::kHopLimitExceeded, 0, kTimeExceeded},
      {icmpv6::kDestinationUnreachable, icmpv6::kPortUnreachable, 0, kUnreachable},
  };
  for (const auto& c : cases) {
    const auto m = Icmpv6Message::error(c.type, c.code, c.rest, kInvoking);
    EXPECT_EQ(serialize_icmpv6(m, kRouter, kA), c.golden + kInvoking) << int{c.type};
    const std::string bytes = c.golden + kInvoking;
    const auto back = parse_icmpv6(bytes, kRouter, kA);
    ASSERT_TRUE(back) << int{c.type};
    EXPECT_TRUE(back->is_error());
    EXPECT_EQ(back->type, c.type);
    EXPECT_EQ(back->code, c.code);
    EXPECT_EQ(back->rest, c.rest);
    EXPECT_EQ(back->data, kInvoking);
  }
  const std::string too_big = kPacketTooBig + kInvoking;
  EXPECT_EQ(parse_icmpv6(too_big, kRouter, kA)->mtu(), 1280u);
  const std::string problem = kParameterProblem + kInvoking;
  EXPECT_EQ(parse_icmpv6(problem, kRouter, kA)->pointer(), 40u);
}

TEST(Icmpv6Test, ErrorQuoteFitsTheMinimumMtu) {
  const std::string big(3000, 'q');
  const auto m = Icmpv6Message::error(icmpv6::kPacketTooBig, 0, 1280, big);
  EXPECT_EQ(m.data.size(), 1232u);
  EXPECT_EQ(Ipv6Header::kSize + Icmpv6Message::kHeaderSize + m.data.size(), 1280u);
}

TEST(Icmpv6Test, RejectsEveryTruncation) {
  for (size_t n = 0; n < kEchoRequest.size(); ++n) {
    const auto m = parse_icmpv6(std::string_view(kEchoRequest).substr(0, n), kA, kB);
    ASSERT_FALSE(m) << n;
    EXPECT_EQ(m.error(), n < 8 ? Icmpv6Error::Truncated : Icmpv6Error::BadChecksum) << n;
  }
}

TEST(Icmpv6Test, RejectsEveryFlippedBit) {
  for (size_t bit = 0; bit < 8 * kEchoRequest.size(); ++bit) {
    const auto m = parse_icmpv6(test::flip_bit(kEchoRequest, bit), kA, kB);
    ASSERT_FALSE(m) << bit;
    EXPECT_EQ(m.error(), Icmpv6Error::BadChecksum);
  }
}

TEST(Icmpv6Test, ChecksumCoversThePseudoHeader) {
  EXPECT_FALSE(parse_icmpv6(kEchoRequest, kA, addr("fd00::3")));
  EXPECT_FALSE(parse_icmpv6(kEchoRequest, addr("fd00::3"), kB));
  // A zero checksum is not "none" (RFC 4443 §2.3).
  std::string zero = kEchoRequest;
  zero[2] = 0;
  zero[3] = 0;
  EXPECT_FALSE(parse_icmpv6(zero, kA, kB));
}

TEST(Icmpv6Test, TrailingBytesBreakTheChecksum) {
  // ICMPv6 has no length field: the IPv6 payload length bounds the message
  // and is in the pseudo-header, so even zero bytes past it do not verify.
  const std::string padded = kEchoRequest + std::string(2, '\0');
  const auto m = parse_icmpv6(padded, kA, kB);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error(), Icmpv6Error::BadChecksum);
}

TEST(Icmpv6QuoteTest, ParsesTheQuotedTcpSegment) {
  const auto q = parse_icmpv6_quote(kInvoking);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->header.src, kA);
  EXPECT_EQ(q->header.dst, kB);
  EXPECT_EQ(q->header.payload_length, 32);
  EXPECT_EQ(q->protocol, ipv6::kTcp);
  EXPECT_EQ(q->upper, std::string_view(kInvoking).substr(40));
}

TEST(Icmpv6QuoteTest, AcceptsACutQuoteWithEightBytes) {
  for (size_t n = 0; n < kInvoking.size(); ++n) {
    const auto q = parse_icmpv6_quote(std::string_view(kInvoking).substr(0, n));
    if (n >= 48) {
      ASSERT_TRUE(q) << n;
      EXPECT_EQ(q->upper.size(), n - 40);
    } else {
      ASSERT_FALSE(q) << n;
      EXPECT_EQ(q.error(), Icmpv6QuoteError::Truncated) << n;
    }
  }
}

TEST(Icmpv6QuoteTest, WalksQuotedExtensionHeaders) {
  // Destination options, then a first fragment header, then TCP.
  std::string quote = kInvoking.substr(0, 40) + from_hex("2c00 0104 0000 0000") +
                      from_hex("0600 0001 0000 0007") + kInvoking.substr(40, 8);
  quote[6] = static_cast<char>(ipv6::kDestinationOptions);
  const auto q = parse_icmpv6_quote(quote);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->protocol, ipv6::kTcp);
  EXPECT_EQ(q->upper, kInvoking.substr(40, 8));
  // The same with a later fragment: no ports to find.
  std::string later = quote;
  later[50] = 0x05;  // offset 1280
  later[51] = 0x01;
  EXPECT_EQ(parse_icmpv6_quote(later).error(), Icmpv6QuoteError::NotFirstFragment);
  // A malformed quoted chain.
  std::string bad = quote;
  bad[42] = static_cast<char>(0x9e);  // unrecognized option, discard and report
  bad[43] = 2;
  EXPECT_EQ(parse_icmpv6_quote(bad).error(), Icmpv6QuoteError::BadChain);
}

TEST(Icmpv6QuoteTest, RejectsOtherVersions) {
  std::string v4 = kInvoking;
  v4[0] = 0x45;
  EXPECT_EQ(parse_icmpv6_quote(v4).error(), Icmpv6QuoteError::BadVersion);
}

TEST(Icmpv6Test, EveryErrorHasAName) {
  for (size_t i = 0; i < static_cast<size_t>(Icmpv6Error::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<Icmpv6Error>(i)), "?");
  }
  for (size_t i = 0; i < static_cast<size_t>(Icmpv6QuoteError::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<Icmpv6QuoteError>(i)), "?");
  }
}

}  // namespace
}  // namespace tinytcp::wire

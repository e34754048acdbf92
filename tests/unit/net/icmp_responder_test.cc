#include "net/icmp_responder.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/net/net_test_util.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using test::ip;
namespace icmp = wire::icmp;

class IcmpResponderTest : public ::testing::Test {
 protected:
  // An error about `datagram`; returns the ICMP message sent, if any.
  std::optional<wire::IcmpMessage> error_about(const std::string& datagram) {
    const auto parsed = wire::parse_ipv4(datagram);
    EXPECT_TRUE(parsed);
    out_ = std::string(responder_.error(icmp::kDestinationUnreachable, icmp::kHostUnreachable, 0,
                                        *parsed, datagram, ip("10.0.0.1"), now_));
    if (out_.empty()) {
      return std::nullopt;
    }
    const auto ip4 = wire::parse_ipv4(out_);
    EXPECT_TRUE(ip4);
    EXPECT_EQ(ip4->header.src, ip("10.0.0.1"));
    EXPECT_EQ(ip4->header.dst, parsed->header.src);
    const auto m = wire::parse_icmp(ip4->payload);
    EXPECT_TRUE(m);
    return m ? std::optional<wire::IcmpMessage>(*m) : std::nullopt;
  }
  uint64_t suppressed(IcmpSuppressed s) const { return responder_.stats().suppressed[s]; }

  Instant now_;
  IcmpResponder responder_{IcmpResponder::Config{10, 3, 64}};
  std::string out_;
};

TEST_F(IcmpResponderTest, ErrorQuotesTheOriginal) {
  const auto d = test::ipv4_datagram(ip("10.0.0.2"), ip("10.9.9.9"), 64, 30);
  const auto m = error_about(d);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, icmp::kDestinationUnreachable);
  EXPECT_EQ(m->code, icmp::kHostUnreachable);
  EXPECT_EQ(m->data, d);
}

TEST_F(IcmpResponderTest, NoErrorAboutNonFirstFragment) {
  auto d = test::ipv4_datagram(ip("10.0.0.2"), ip("10.9.9.9"), 64, 30);
  d[7] = 1;  // offset 8 bytes
  d[10] = d[11] = 0;
  const uint16_t c = wire::ipv4_header_checksum(std::string_view(d).substr(0, 20));
  d[10] = static_cast<char>(c >> 8);
  d[11] = static_cast<char>(c);
  EXPECT_FALSE(error_about(d));
  EXPECT_EQ(suppressed(IcmpSuppressed::AboutFragment), 1u);
}

TEST_F(IcmpResponderTest, NoErrorAboutNonUnicast) {
  EXPECT_FALSE(error_about(test::ipv4_datagram(ip("10.0.0.2"), ip("255.255.255.255"))));
  EXPECT_FALSE(error_about(test::ipv4_datagram(ip("10.0.0.2"), ip("239.1.1.1"))));
  EXPECT_FALSE(error_about(test::ipv4_datagram(ip("0.0.0.0"), ip("10.9.9.9"))));
  EXPECT_FALSE(error_about(test::ipv4_datagram(ip("127.0.0.1"), ip("10.9.9.9"))));
  EXPECT_EQ(suppressed(IcmpSuppressed::AboutNonUnicast), 4u);
}

TEST_F(IcmpResponderTest, ErrorAboutAnEchoIsAllowed) {
  std::string echo(8, '\0');
  BufferWriter w(echo.data(), echo.size());
  serialize(wire::IcmpMessage::echo(icmp::kEchoRequest, 1, 1, ""), w);
  auto d = test::ipv4_datagram(ip("10.0.0.2"), ip("10.9.9.9"), 64, 8, 1);
  d.replace(20, 8, echo);
  EXPECT_TRUE(error_about(d));
}

TEST_F(IcmpResponderTest, TokenBucketRefillsWithTime) {
  const auto d = test::ipv4_datagram(ip("10.0.0.2"), ip("10.9.9.9"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(error_about(d)) << i;
  }
  EXPECT_FALSE(error_about(d));
  EXPECT_EQ(suppressed(IcmpSuppressed::RateLimited), 1u);
  now_ += 100ms;  // 10/s: one token
  EXPECT_TRUE(error_about(d));
  EXPECT_FALSE(error_about(d));
  now_ += 10s;  // refills only up to the burst
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(error_about(d)) << i;
  }
  EXPECT_FALSE(error_about(d));
  EXPECT_EQ(responder_.stats().errors, 7u);
}

TEST_F(IcmpResponderTest, EchoReplyMirrorsTheRequest) {
  std::string echo(8 + 3, '\0');
  BufferWriter w(echo.data(), echo.size());
  serialize(wire::IcmpMessage::echo(icmp::kEchoRequest, 0xbeef, 42, "abc"), w);
  auto d = test::ipv4_datagram(ip("10.0.0.2"), ip("10.0.0.1"), 64, echo.size(), 1);
  d.replace(20, echo.size(), echo);
  const auto request = wire::parse_ipv4(d);
  const auto m = wire::parse_icmp(request->payload);
  const std::string reply(responder_.echo_reply(*request, *m, ip("10.0.0.1")));
  const auto v = wire::parse_ipv4(reply);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header.dst, ip("10.0.0.2"));
  EXPECT_EQ(v->header.ttl, 64);
  const auto r = wire::parse_icmp(v->payload);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->type, icmp::kEchoReply);
  EXPECT_EQ(r->echo_id(), 0xbeef);
  EXPECT_EQ(r->echo_sequence(), 42);
  EXPECT_EQ(r->data, "abc");
}

}  // namespace
}  // namespace tinytcp::net

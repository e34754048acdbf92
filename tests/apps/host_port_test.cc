// The apps' HOST:PORT endpoints (common/kernel_tcp.hh, issue 20): IPv6 in
// brackets, every malformed form refused with its own message, names and
// addresses resolved (IPv4 first), and kernel TCP over ::1, with a listener
// on [::] taking IPv4 clients as IPv4 addresses.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/kernel_tcp.hh"

namespace tinytcp::apps {
namespace {

using namespace std::chrono_literals;

// The message parse_host_port throws for `text` ("" if it does not).
std::string refusal(const std::string& text) {
  try {
    parse_host_port(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(HostPortTest, ParsesNamesAndBothFamilies) {
  const HostPort v6 = parse_host_port("[fd00:7474:1::9]:5000");
  EXPECT_EQ(v6.host, "fd00:7474:1::9");
  EXPECT_EQ(v6.port, 5000);
  EXPECT_EQ(v6.to_string(), "[fd00:7474:1::9]:5000");
  EXPECT_EQ(parse_host_port("[::1]:1").to_string(), "[::1]:1");
  EXPECT_EQ(parse_host_port("127.0.0.1:65535").to_string(), "127.0.0.1:65535");
  EXPECT_EQ(parse_host_port("localhost:80").host, "localhost");
}

TEST(HostPortTest, RefusesMalformedEndpointsWithOneClearReason) {
  EXPECT_NE(refusal("::1:80").find("an IPv6 address goes in brackets"), std::string::npos);
  EXPECT_NE(refusal("fd00::1]:80").find("an IPv6 address goes in brackets"), std::string::npos);
  EXPECT_NE(refusal("[::1:80").find("missing ']'"), std::string::npos);
  EXPECT_NE(refusal("[::g]:80").find("bad IPv6 address '::g'"), std::string::npos);
  EXPECT_NE(refusal("[1.2.3.4]:80").find("bad IPv6 address"), std::string::npos);
  EXPECT_NE(refusal("[]:80").find("bad IPv6 address"), std::string::npos);
  EXPECT_NE(refusal("[::1]").find("expected [IPv6]:PORT"), std::string::npos);
  EXPECT_NE(refusal("[::1]80").find("expected [IPv6]:PORT"), std::string::npos);
  for (const char* bad_port : {"[::1]:", "[::1]:0", "[::1]:65536", "[::1]:8x", "[::1]:-1",
                               "[::1]: 80", "host:", "host:99999"}) {
    EXPECT_NE(refusal(bad_port).find("bad port"), std::string::npos) << bad_port;
  }
  for (const char* no_port : {"", "host", ":80"}) {
    EXPECT_NE(refusal(no_port).find("expected HOST:PORT or [IPv6]:PORT"), std::string::npos)
        << no_port;
  }
}

TEST(HostPortTest, ListenOptionsArePortsOrAddresses) {
  EXPECT_EQ(parse_listen("9000").host, "");
  EXPECT_EQ(parse_listen("9000").port, 9000);
  EXPECT_EQ(parse_listen("[::]:9000").host, "::");
  EXPECT_EQ(parse_listen("[::1]:9000").to_string(), "[::1]:9000");
  EXPECT_EQ(parse_listen("127.0.0.1:9").to_string(), "127.0.0.1:9");
  for (const char* bad : {"", "0", "65536", "9x", "-1", "::9000", "[::]9000", "[::"}) {
    EXPECT_THROW(parse_listen(bad), std::invalid_argument) << bad;
  }
}

TEST(HostPortTest, ResolvesAddressesOfEitherFamilyAndNamesIpv4First) {
  const SocketAddress v6 = resolve(parse_host_port("[::1]:9"));
  EXPECT_EQ(v6.family(), AF_INET6);
  EXPECT_EQ(v6.to_string(), "[::1]:9");
  EXPECT_TRUE(v6.ip().is_v6());
  const SocketAddress v4 = resolve(parse_host_port("127.0.0.1:9"));
  EXPECT_EQ(v4.family(), AF_INET);
  EXPECT_EQ(v4.to_string(), "127.0.0.1:9");
  // localhost has 127.0.0.1 (and maybe ::1): the IPv4 one is taken.
  EXPECT_EQ(resolve(parse_host_port("localhost:9")).family(), AF_INET);
  EXPECT_EQ(udp_device(parse_host_port("[::1]:7")), "udp:[::1]:7");
  EXPECT_EQ(udp_device(parse_host_port("127.0.0.1:7")), "udp:127.0.0.1:7");
  EXPECT_EQ(resolve_address("::1"), "::1");
  EXPECT_THROW(resolve(HostPort{"no-such-host.invalid", 1}), std::runtime_error);
}

// A SocketAddress's address and port are an io::UdpEndpoint's: an IPv4
// endpoint on an IPv6 socket is IPv4-mapped and reads back as IPv4.
TEST(HostPortTest, SocketAddressesOfEndpoints) {
  const io::UdpEndpoint v4 = *io::UdpEndpoint::parse("10.1.2.3:80");
  const SocketAddress mapped = SocketAddress::of(v4, AF_INET6);
  EXPECT_EQ(mapped.family(), AF_INET6);
  EXPECT_EQ(mapped.length, sizeof(sockaddr_in6));
  EXPECT_EQ(mapped.endpoint(), v4);
  EXPECT_TRUE(mapped.ip().is_v4());
  EXPECT_EQ(mapped.to_string(), "10.1.2.3:80");
  const SocketAddress plain = SocketAddress::of(v4, AF_INET);
  EXPECT_EQ(plain.family(), AF_INET);
  EXPECT_EQ(plain.length, sizeof(sockaddr_in));
  EXPECT_EQ(plain.port(), 80);
  const io::UdpEndpoint v6 = *io::UdpEndpoint::parse("[fd00::1]:9");
  EXPECT_EQ(SocketAddress::of(v6, AF_INET).length, 0u);  // no IPv4 form
  EXPECT_EQ(SocketAddress::of(v6, AF_INET6).ip().to_string(), "fd00::1");
  EXPECT_EQ(SocketAddress{}.to_string(), "0.0.0.0:0");  // no family
}

// A listener on [::] (listen_tcp(port)) takes clients of both families; an
// IPv4 client's address reads as IPv4, not ::ffff:127.0.0.1.
TEST(HostPortTest, KernelTcpListensOnBothFamilies) {
  const int listener = listen_tcp(0, 4);
  const uint16_t port = local_port(listener);
  for (const std::string host : {"::1", "127.0.0.1"}) {
    int client = -1;
    try {
      client = connect_tcp(HostPort{host, port}, 2s);
    } catch (const std::runtime_error& e) {
      if (host == "::1") {
        GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
      }
      throw;
    }
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    const int accepted = ::accept(listener, reinterpret_cast<sockaddr*>(&from), &len);
    ASSERT_GE(accepted, 0) << host;
    const SocketAddress peer = SocketAddress::of(from, len);
    EXPECT_EQ(peer.ip().to_string(), host);
    EXPECT_EQ(peer.ip().is_v6(), host == "::1");
    ::close(accepted);
    ::close(client);
  }
  ::close(listener);
}

}  // namespace
}  // namespace tinytcp::apps

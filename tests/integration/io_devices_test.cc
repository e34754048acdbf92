// TunDevice, TapDevice and PcapCapture against the real kernel, each test in
// its own fresh network namespace (integration/privileged.hh). The kernel
// pings an address on the device's subnet; the test plays that host, answers
// (ARP and ICMP echo) through the adapter, and checks that ping succeeds and
// that tcpdump and tshark read the capture without a malformed packet.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "integration/privileged.hh"
#include "io/event_loop.hh"
#include "io/pcap_capture.hh"
#include "io/tap_device.hh"
#include "io/tun_device.hh"
#include "util/checksum.hh"

using namespace std::chrono_literals;

namespace tinytcp::io {
namespace {

using tinytcp::testing::run;

uint8_t byte(std::string_view p, size_t i) {
  return static_cast<uint8_t>(p[i]);
}
uint16_t u16(std::string_view p, size_t i) {
  return static_cast<uint16_t>((byte(p, i) << 8) | byte(p, i + 1));
}
void put16(std::string& p, size_t i, uint16_t v) {
  p[i] = static_cast<char>(v >> 8);
  p[i + 1] = static_cast<char>(v);
}
std::string ipv4_bytes(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return std::string{static_cast<char>(a), static_cast<char>(b), static_cast<char>(c),
                     static_cast<char>(d)};
}

struct Ipv4Info {
  uint8_t protocol;
  std::string src;
  std::string dst;
  size_t header_bytes;
};
std::optional<Ipv4Info> ipv4_info(std::string_view ip) {
  if (ip.size() < 20 || (byte(ip, 0) >> 4) != 4) {
    return std::nullopt;
  }
  const size_t ihl = (byte(ip, 0) & 0x0f) * 4u;
  if (ihl < 20 || ip.size() < ihl) {
    return std::nullopt;
  }
  return Ipv4Info{byte(ip, 9), std::string(ip.substr(12, 4)), std::string(ip.substr(16, 4)), ihl};
}

// The ICMP echo reply to an echo request, or nothing.
std::optional<std::string> echo_reply(std::string_view ip) {
  const auto info = ipv4_info(ip);
  if (!info || info->protocol != 1 || ip.size() < info->header_bytes + 8 ||
      byte(ip, info->header_bytes) != 8) {
    return std::nullopt;
  }
  std::string reply(ip);
  reply.replace(12, 4, info->dst);  // swapping the addresses keeps the IP checksum
  reply.replace(16, 4, info->src);
  const size_t icmp = info->header_bytes;
  reply[icmp] = 0;  // echo reply
  put16(reply, icmp + 2, 0);
  InternetChecksum sum;
  sum.add(std::string_view(reply).substr(icmp));
  put16(reply, icmp + 2, sum.value());
  return reply;
}

struct CaptureChecks {
  int tcpdump_status;
  int tcpdump_lines;
  int tshark_status;
  int tshark_lines;
  std::string malformed;
};
CaptureChecks check_capture(const std::string& path) {
  const auto tcpdump = run("tcpdump -nn -r " + path + " 2>/dev/null");
  const auto tshark = run("tshark -n -r " + path + " 2>/dev/null");
  const auto malformed = run("tshark -n -r " + path + " -Y _ws.malformed 2>/dev/null");
  const auto lines = [](const std::string& s) {
    return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
  };
  return {tcpdump.status, lines(tcpdump.output), tshark.status, lines(tshark.output),
          malformed.output};
}

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override { TINYTCP_ENTER_PRIVILEGED_NETNS(); }
  void TearDown() override {
    if (std::getenv("TINYTCP_KEEP_PCAP") == nullptr) {
      ::unlink(pcap_path_.c_str());
    }
  }

  // Starts `ping -c 3` in the background (ping runs in our namespace).
  void start_ping(const std::string& address) {
    ping_ = std::thread(
        [this, address] { ping_result_ = run("ping -n -c 3 -i 0.2 -W 3 " + address + " 2>&1"); });
  }
  tinytcp::testing::CommandResult finish_ping() {
    ping_.join();
    return ping_result_;
  }
  // Runs the loop until `done()` or 10 s pass.
  void run_until(EventLoop& loop, const std::function<bool()>& done) {
    const Instant give_up = loop.now() + 10s;
    while (!done() && loop.now() < give_up) {
      loop.run_once(100ms);
    }
  }

  std::string pcap_path_ =
      ::testing::TempDir() + "tinytcp_io_devices_" + std::to_string(::getpid()) + ".pcap";
  std::thread ping_;
  tinytcp::testing::CommandResult ping_result_;
};

TEST_F(DeviceTest, TunOpensWithDeviceMtuAndLongTxQueue) {
  TunDevice tun("tt0");
  EXPECT_EQ(tun.name(), "tt0");
  EXPECT_EQ(tun.link_type(), LinkType::kRawIp);
  EXPECT_GE(tun.fd(), 0);
  EXPECT_EQ(tun.mtu(), 1500u);
  EXPECT_EQ(tun.txqueuelen(), 10000u);
  EXPECT_NE(run("ip link show tt0").output.find("qlen 10000"), std::string::npos);
  ASSERT_EQ(run("ip link set tt0 mtu 1400").status, 0);
  tun.refresh_mtu();
  EXPECT_EQ(tun.mtu(), 1400u);
}

TEST_F(DeviceTest, TunCarriesKernelPingBothWaysAndCaptureIsClean) {
  TunDevice tun("tt0");
  ASSERT_EQ(run("ip addr add 169.254.77.1/24 dev tt0 && ip link set tt0 up").status, 0);
  std::optional<PcapCapture> capture;
  capture.emplace(tun, pcap_path_);
  EventLoop loop;
  int requests = 0;
  const auto id = loop.add_adapter(*capture, [&](std::string_view packet) {
    const auto info = ipv4_info(packet);
    if (!info) {
      return;  // IPv6 housekeeping, if any
    }
    EXPECT_EQ(info->src, ipv4_bytes(169, 254, 77, 1));
    if (const auto reply = echo_reply(packet)) {
      EXPECT_EQ(info->dst, ipv4_bytes(169, 254, 77, 9));
      ++requests;
      capture->send(*reply);
    }
  });
  start_ping("169.254.77.9");
  run_until(loop, [&] { return requests >= 3; });
  const auto ping = finish_ping();
  loop.remove_adapter(*capture, id);
  capture.reset();  // closes the file

  EXPECT_EQ(requests, 3);
  EXPECT_EQ(ping.status, 0) << ping.output;  // the kernel accepted our replies
  EXPECT_EQ(tun.stats().packets_sent, 3u);
  EXPECT_EQ(tun.drops().total(), 0u);
  const auto checks = check_capture(pcap_path_);
  EXPECT_EQ(checks.tcpdump_status, 0);
  EXPECT_GE(checks.tcpdump_lines, 6);
  EXPECT_EQ(checks.tshark_status, 0);
  EXPECT_GE(checks.tshark_lines, 6);
  EXPECT_EQ(checks.malformed, "");
}

TEST_F(DeviceTest, TunDeliversKernelUdpAndKernelAcceptsOurs) {
  TunDevice tun("tt0");
  ASSERT_EQ(run("ip addr add 169.254.78.1/24 dev tt0 && ip link set tt0 up").status, 0);
  // A kernel socket on the kernel's side of the device.
  const int sock = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_port = htons(4000);
  local.sin_addr.s_addr = htonl(0xa9fe4e01);  // 169.254.78.1
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&local), sizeof(local)), 0);
  sockaddr_in peer = local;
  peer.sin_addr.s_addr = htonl(0xa9fe4e09);  // 169.254.78.9: us
  peer.sin_port = htons(5000);
  ASSERT_EQ(::sendto(sock, "hello", 5, 0, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)), 5);

  EventLoop loop;
  std::string datagram;
  const auto id = loop.add_adapter(tun, [&](std::string_view p) {
    const auto info = ipv4_info(p);
    if (info && info->protocol == 17) {
      datagram = std::string(p);
    }
  });
  run_until(loop, [&] { return !datagram.empty(); });
  loop.remove_adapter(tun, id);
  ASSERT_EQ(datagram.size(), 20u + 8u + 5u);
  EXPECT_EQ(datagram.substr(28), "hello");
  EXPECT_EQ(u16(datagram, 20), 4000);
  EXPECT_EQ(u16(datagram, 22), 5000);

  // Answer: swap addresses and ports, new payload, correct checksums.
  std::string reply = datagram.substr(0, 28) + "world";
  reply.replace(12, 4, datagram.substr(16, 4));
  reply.replace(16, 4, datagram.substr(12, 4));
  put16(reply, 20, 5000);
  put16(reply, 22, 4000);
  put16(reply, 26, 0);  // UDP checksum 0: none (RFC 768)
  put16(reply, 10, 0);
  InternetChecksum ip_sum;
  ip_sum.add(std::string_view(reply).substr(0, 20));
  put16(reply, 10, ip_sum.value());
  tun.send(reply);
  EXPECT_EQ(tun.drops().total(), 0u);
  char buffer[16] = {};
  timeval tv{2, 0};
  ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  EXPECT_EQ(::recv(sock, buffer, sizeof(buffer), 0), 5);
  EXPECT_EQ(std::string(buffer, 5), "world");
  ::close(sock);
}

TEST_F(DeviceTest, OpensTheDevicesTheScriptsMake) {
  const std::string scripts = std::string(TINYTCP_SOURCE_DIR) + "/scripts/";
  ASSERT_EQ(run(scripts + "tun.sh start 206 >/dev/null").status, 0);
  ASSERT_EQ(run(scripts + "tap.sh start 207 >/dev/null").status, 0);
  TunDevice tun("tun206");
  TapDevice tap("tap207");
  EXPECT_EQ(tun.mtu(), 1500u);
  EXPECT_EQ(tap.txqueuelen(), 10000u);
  // The kernel routes 169.254.206.0/24 to the device we hold.
  EventLoop loop;
  bool seen = false;
  const auto id = loop.add_adapter(tun, [&](std::string_view p) {
    const auto info = ipv4_info(p);
    seen = seen || (info && info->dst == ipv4_bytes(169, 254, 206, 9));
  });
  start_ping("169.254.206.9");
  run_until(loop, [&] { return seen; });
  loop.remove_adapter(tun, id);
  finish_ping();
  EXPECT_TRUE(seen);
}

TEST_F(DeviceTest, TunRejectsPacketsLargerThanMtu) {
  TunDevice tun("tt0");
  tun.send(std::string(tun.mtu() + 1, '\x45'));
  EXPECT_EQ(tun.drops()[DeviceDrop::kTooBig], 1u);
  EXPECT_EQ(tun.stats().send_drops, 1u);
}

TEST_F(DeviceTest, TapCarriesArpAndPingAndCaptureIsClean) {
  TapDevice tap("tt1");
  EXPECT_EQ(tap.link_type(), LinkType::kEthernet);
  EXPECT_EQ(tap.mtu(), 1500u);
  EXPECT_EQ(tap.txqueuelen(), 10000u);
  ASSERT_EQ(run("ip addr add 169.254.79.1/24 dev tt1 && ip link set tt1 up").status, 0);
  const auto kernel_mac = tap.kernel_mac();
  const std::string our_mac("\x02\x00\x00\x00\x00\x09", 6);
  const std::string kernel_mac_bytes(kernel_mac.begin(), kernel_mac.end());
  const std::string our_ip = ipv4_bytes(169, 254, 79, 9);

  std::optional<PcapCapture> capture;
  capture.emplace(tap, pcap_path_);
  EventLoop loop;
  int arp_requests = 0;
  int echo_requests = 0;
  const auto id = loop.add_adapter(*capture, [&](std::string_view frame) {
    if (frame.size() < 14) {
      ADD_FAILURE() << "runt frame";
      return;
    }
    const uint16_t type = u16(frame, 12);
    if (type == 0x0806 && frame.size() >= 42 && u16(frame, 20) == 1 &&
        frame.substr(38, 4) == our_ip) {
      EXPECT_EQ(frame.substr(6, 6), kernel_mac_bytes);
      ++arp_requests;
      // RFC 826 reply: we are 169.254.79.9 at our_mac.
      std::string reply = std::string(frame.substr(6, 6)) + our_mac + "\x08\x06" +
                          std::string(frame.substr(14, 6)) + std::string("\x00\x02", 2) + our_mac +
                          our_ip + std::string(frame.substr(22, 10));
      reply.resize(60, '\0');  // minimum Ethernet frame
      capture->send(reply);
    } else if (type == 0x0800 && frame.substr(0, 6) == our_mac) {
      if (const auto reply = echo_reply(frame.substr(14))) {
        ++echo_requests;
        capture->send(std::string(frame.substr(6, 6)) + our_mac + std::string("\x08\x00", 2) +
                      *reply);
      }
    }
  });
  start_ping("169.254.79.9");
  run_until(loop, [&] { return echo_requests >= 3; });
  const auto ping = finish_ping();
  loop.remove_adapter(*capture, id);
  capture.reset();

  EXPECT_GE(arp_requests, 1);
  EXPECT_EQ(echo_requests, 3);
  EXPECT_EQ(ping.status, 0) << ping.output;
  EXPECT_EQ(tap.drops().total(), 0u);
  const auto checks = check_capture(pcap_path_);
  EXPECT_EQ(checks.tcpdump_status, 0);
  EXPECT_GE(checks.tcpdump_lines, 8);  // ARP request + reply, 3 echo requests + replies
  EXPECT_EQ(checks.tshark_status, 0);
  EXPECT_EQ(checks.malformed, "");
  EXPECT_NE(run("tshark -n -r " + pcap_path_ + " -Y arp 2>/dev/null").output.find("169.254.79.9"),
            std::string::npos);
}

TEST_F(DeviceTest, TapFramesWithoutAnswerAreArpRequests) {
  TapDevice tap("tt1");
  ASSERT_EQ(run("ip addr add 169.254.80.1/24 dev tt1 && ip link set tt1 up").status, 0);
  EventLoop loop;
  int arp_requests = 0;
  const auto id = loop.add_adapter(tap, [&](std::string_view frame) {
    if (frame.size() >= 42 && u16(frame, 12) == 0x0806 && u16(frame, 20) == 1 &&
        frame.substr(0, 6) == std::string(6, '\xff') &&
        frame.substr(38, 4) == ipv4_bytes(169, 254, 80, 9)) {
      ++arp_requests;
    }
  });
  start_ping("169.254.80.9");
  run_until(loop, [&] { return arp_requests >= 2; });
  loop.remove_adapter(tap, id);
  const auto ping = finish_ping();
  EXPECT_GE(arp_requests, 2);  // the kernel retries: nobody answered
  EXPECT_NE(ping.status, 0);
}

}  // namespace
}  // namespace tinytcp::io

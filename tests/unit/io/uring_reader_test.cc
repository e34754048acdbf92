#include "io/uring_reader.hh"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "io/tun_device.hh"

namespace tinytcp::io {
namespace {

class Pipe {
 public:
  Pipe() {
    if (::pipe2(fds_, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw std::system_error(errno, std::generic_category(), "pipe2");
    }
  }
  ~Pipe() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int reader() const { return fds_[0]; }
  void put(const std::string& text) const {
    ASSERT_EQ(::write(fds_[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }

 private:
  int fds_[2] = {-1, -1};
};

std::unique_ptr<UringReader> make_reader(int fd, size_t buffer_bytes) {
  std::string why;
  auto reader = UringReader::create(fd, buffer_bytes, &why);
  if (!reader) {
    EXPECT_FALSE(why.empty());
  }
  return reader;
}

TEST(UringReaderTest, AnEmptyDescriptorIsEagainNotAWait) {
  Pipe pipe;
  auto reader = make_reader(pipe.reader(), 64);
  if (!reader) {
    GTEST_SKIP() << "no io_uring here";
  }
  ASSERT_EQ(reader->read(8), 8u);  // returns at once: nothing will ever be written
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(reader->result(i), -EAGAIN) << i;
    EXPECT_TRUE(reader->datagram(i).empty());
  }
  EXPECT_EQ(reader->enters(), 1u);
  EXPECT_FALSE(reader->broken());
}

TEST(UringReaderTest, ReadsRunInOrderIntoTheirOwnBuffers) {
  Pipe pipe;
  auto reader = make_reader(pipe.reader(), 4);  // a pipe is a stream: 4 bytes per READ
  if (!reader) {
    GTEST_SKIP() << "no io_uring here";
  }
  pipe.put("aaaabbbbcc");
  ASSERT_EQ(reader->read(4), 4u);
  EXPECT_EQ(reader->datagram(0), "aaaa");
  EXPECT_EQ(reader->datagram(1), "bbbb");
  EXPECT_EQ(reader->datagram(2), "cc");
  EXPECT_EQ(reader->result(3), -EAGAIN);
  EXPECT_EQ(reader->result(4), -ECANCELED);  // never armed
  pipe.put("dd");
  ASSERT_EQ(reader->read(1000), 64u);  // clamped to kEntries
  EXPECT_EQ(reader->datagram(0), "dd");
  EXPECT_EQ(reader->enters(), 2u);
}

TEST(UringReaderTest, WritesRunBeforeTheReadsOfTheirEnter) {
  int fds[2] = {-1, -1};
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
  auto reader = make_reader(fds[0], 64);
  if (!reader) {
    ::close(fds[0]);
    ::close(fds[1]);
    GTEST_SKIP() << "no io_uring here";
  }
  ASSERT_EQ(::write(fds[1], "x1", 2), 2);
  const std::string_view packets[] = {"w1", "w22", "w333"};
  int results[3] = {0, 0, 0};
  ASSERT_TRUE(reader->write_then_read(packets, 3, results, 4));
  EXPECT_EQ(results[0], 2);
  EXPECT_EQ(results[1], 3);
  EXPECT_EQ(results[2], 4);
  ASSERT_EQ(reader->reads(), 4u);
  EXPECT_EQ(reader->datagram(0), "x1");
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(reader->result(i), -EAGAIN) << i;
  }
  char buffer[16];
  EXPECT_EQ(::read(fds[1], buffer, sizeof buffer), 2);
  EXPECT_EQ(::read(fds[1], buffer, sizeof buffer), 3);
  EXPECT_EQ(::read(fds[1], buffer, sizeof buffer), 4);
  EXPECT_EQ(reader->enters(), 1u);
  EXPECT_EQ(reader->write_enters(), 1u);
  // A plain read() after it: no WRITE in front, results from index 0 again.
  ASSERT_EQ(::write(fds[1], "x2", 2), 2);
  ASSERT_EQ(reader->read(2), 2u);
  EXPECT_EQ(reader->datagram(0), "x2");
  EXPECT_EQ(reader->result(1), -EAGAIN);
  EXPECT_EQ(reader->write_enters(), 1u);
  EXPECT_FALSE(reader->broken());
  ::close(fds[0]);
  ::close(fds[1]);
}

// Runs `body` on a thread of its own network namespace (unshare(CLONE_NEWNET)
// is per thread), so a TUN device can be brought up and fed by kernel sockets
// without touching the machine's network. False when that is not allowed.
template <typename Body>
bool in_own_netns(Body body) {
  bool ran = false;
  std::thread thread([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      return;
    }
    ran = true;
    body();
  });
  thread.join();
  return ran;
}

// Up with 10.77.0.1/24 in the current namespace; false when not possible.
bool bring_up(const std::string& name) {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    return false;
  }
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  auto* addr = reinterpret_cast<sockaddr_in*>(&ifr.ifr_addr);
  addr->sin_family = AF_INET;
  ::inet_pton(AF_INET, "10.77.0.1", &addr->sin_addr);
  bool ok = ::ioctl(s, SIOCSIFADDR, &ifr) == 0;
  ::inet_pton(AF_INET, "255.255.255.0", &addr->sin_addr);
  ok = ok && ::ioctl(s, SIOCSIFNETMASK, &ifr) == 0;
  ok = ok && ::ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  ok = ok && ::ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
  ::close(s);
  return ok;
}

// UDP datagrams "packet-<i>" from the kernel to 10.77.0.2: out through the device.
void send_udp(int count) {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(s, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  ::inet_pton(AF_INET, "10.77.0.2", &to.sin_addr);
  for (int i = 0; i < count; ++i) {
    const std::string text = "packet-" + std::to_string(i);
    ASSERT_EQ(::sendto(s, text.data(), text.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
              static_cast<ssize_t>(text.size()));
  }
  ::close(s);
}

// The UDP payload of an IPv4/UDP datagram to 10.77.0.2:9, or "" (IPv6
// router solicitations and the like, which the kernel sends on its own).
std::string udp_payload(std::string_view packet) {
  if (packet.size() < 28 || (static_cast<uint8_t>(packet[0]) >> 4) != 4 || packet[9] != 17) {
    return "";
  }
  const size_t ihl = (static_cast<uint8_t>(packet[0]) & 0x0f) * 4u;
  return packet.size() > ihl + 8 ? std::string(packet.substr(ihl + 8)) : "";
}

TEST(UringReaderTest, KernelDeviceReadsABurstInOrderInFewEnters) {
  bool skipped = false;
  std::string skip_reason;
  const bool ran = in_own_netns([&] {
    KernelDeviceConfig config{""};
    config.uring = true;
    std::unique_ptr<TunDevice> tun;
    try {
      tun = std::make_unique<TunDevice>(config);
    } catch (const std::system_error& e) {
      skipped = true;
      skip_reason = e.what();
      return;
    }
    if (!tun->uring_reads() || !bring_up(tun->name())) {
      skipped = true;
      skip_reason = "no io_uring or cannot bring the device up";
      return;
    }
    while (tun->receive_batch([](std::string_view) {}, 64) > 0) {
    }
    const uint64_t received_before = tun->stats().packets_received;
    constexpr int kCount = 150;
    send_udp(kCount);
    std::vector<std::string> payloads;
    size_t handed_up = 0;
    for (int pass = 0; pass < 10; ++pass) {
      handed_up += tun->receive_batch(
          [&](std::string_view packet) {
            const std::string payload = udp_payload(packet);
            if (!payload.empty()) {
              payloads.push_back(payload);
            }
          },
          64);
    }
    ASSERT_EQ(payloads.size(), static_cast<size_t>(kCount));
    for (int i = 0; i < kCount; ++i) {
      EXPECT_EQ(payloads[static_cast<size_t>(i)], "packet-" + std::to_string(i));
    }
    EXPECT_EQ(tun->stats().packets_received - received_before, handed_up);
    EXPECT_EQ(tun->stats().receive_drops, 0u);
    // 150 packets in batches of at most 64: a handful of enters, not 150 reads.
    EXPECT_LE(tun->uring_read_enters(), 16u);
    EXPECT_TRUE(tun->uring_reads());
  });
  if (!ran || skipped) {
    GTEST_SKIP() << (ran ? skip_reason : "cannot unshare a network namespace here");
  }
}

uint16_t internet_checksum(const std::string& bytes) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
    sum += static_cast<uint32_t>((static_cast<uint8_t>(bytes[i]) << 8) |
                                 static_cast<uint8_t>(bytes[i + 1]));
  }
  if (bytes.size() % 2 != 0) {
    sum += static_cast<uint32_t>(static_cast<uint8_t>(bytes.back()) << 8);
  }
  while (sum >> 16 != 0) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
}

void put16(std::string& bytes, size_t at, uint16_t value) {
  bytes[at] = static_cast<char>(value >> 8);
  bytes[at + 1] = static_cast<char>(value & 0xff);
}

// An ICMP echo request 10.77.0.2 -> 10.77.0.1 (the kernel's end), sequence `seq`.
std::string echo_request(uint16_t seq) {
  std::string icmp(16, '\0');
  icmp[0] = 8;  // echo request
  put16(icmp, 4, 0x7716);
  put16(icmp, 6, seq);
  put16(icmp, 2, internet_checksum(icmp));
  std::string ip(20, '\0');
  ip[0] = 0x45;
  put16(ip, 2, static_cast<uint16_t>(20 + icmp.size()));
  ip[8] = 64;
  ip[9] = 1;  // ICMP
  const char addresses[] = {10, 77, 0, 2, 10, 77, 0, 1};
  ip.replace(12, 8, addresses, 8);
  put16(ip, 10, internet_checksum(ip));
  return ip + icmp;
}

// The sequence number of an ICMP echo reply to 10.77.0.2, or -1.
int echo_reply_seq(std::string_view packet) {
  if (packet.size() < 28 || static_cast<uint8_t>(packet[0]) != 0x45 || packet[9] != 1 ||
      packet[20] != 0) {
    return -1;
  }
  return (static_cast<uint8_t>(packet[26]) << 8) | static_cast<uint8_t>(packet[27]);
}

TEST(UringReaderTest, KernelDeviceReadsTheAnswersToItsWritesInTheSameEnter) {
  bool skipped = false;
  std::string skip_reason;
  const bool ran = in_own_netns([&] {
    KernelDeviceConfig config{""};
    config.uring = true;
    std::unique_ptr<TunDevice> tun;
    try {
      tun = std::make_unique<TunDevice>(config);
    } catch (const std::system_error& e) {
      skipped = true;
      skip_reason = e.what();
      return;
    }
    if (!tun->uring_reads() || !bring_up(tun->name())) {
      skipped = true;
      skip_reason = "no io_uring or cannot bring the device up";
      return;
    }
    while (tun->receive_batch([](std::string_view) {}, 64) > 0) {
    }
    ASSERT_FALSE(tun->next_deadline());
    constexpr uint16_t kCount = 8;
    std::vector<std::string> requests;
    for (uint16_t i = 0; i < kCount; ++i) {
      requests.push_back(echo_request(i));
    }
    const std::vector<std::string_view> views(requests.begin(), requests.end());
    const uint64_t writes_before = tun->uring_enters();
    const uint64_t reads_before = tun->uring_read_enters();
    tun->send_batch(views.data(), views.size());
    EXPECT_EQ(tun->stats().packets_sent, kCount);
    // One enter for the eight WRITEs and the READs behind them, which found
    // the kernel's replies (sent in our context while it took the requests).
    EXPECT_EQ(tun->uring_enters() - writes_before, 1u);
    EXPECT_EQ(tun->uring_read_enters() - reads_before, 1u);
    ASSERT_TRUE(tun->next_deadline());  // due: replies wait in the reader's buffers
    std::vector<int> replies;
    bool sent_during = false;
    for (int pass = 0; pass < 10 && replies.size() < kCount; ++pass) {
      tun->receive_batch(
          [&](std::string_view packet) {
            const std::string copy(packet);
            if (!sent_during) {
              // A send while a packet is handed up reads nothing ahead into
              // the buffer this view lives in.
              sent_during = true;
              const std::string_view one = views[0];
              tun->send_batch(&one, 1);
              EXPECT_EQ(packet, copy);
            }
            const int seq = echo_reply_seq(packet);
            if (seq >= 0) {
              replies.push_back(seq);
            }
          },
          64);
    }
    ASSERT_GE(replies.size(), static_cast<size_t>(kCount));
    for (uint16_t i = 0; i < kCount; ++i) {
      EXPECT_EQ(replies[i], i);
    }
    // After a quiet device the enter armed the fewest READs (4): they found
    // replies, the rest came with the receive_batch() enters.
    EXPECT_GE(tun->packets_read_ahead(), 1u);
    EXPECT_LE(tun->packets_read_ahead(), KernelDevice::kMinUringReads);
    EXPECT_EQ(tun->stats().receive_drops, 0u);
    EXPECT_EQ(tun->stats().send_drops, 0u);
    EXPECT_TRUE(tun->uring_reads());
    EXPECT_TRUE(tun->uring());
  });
  if (!ran || skipped) {
    GTEST_SKIP() << (ran ? skip_reason : "cannot unshare a network namespace here");
  }
}

TEST(UringReaderTest, KernelDeviceWithoutUringReadsWithRead) {
  KernelDeviceConfig config{""};
  config.txqueuelen = 0;
  std::unique_ptr<TunDevice> tun;
  try {
    tun = std::make_unique<TunDevice>(config);
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no TUN device here: " << e.what();
  }
  EXPECT_FALSE(tun->uring_reads());
  EXPECT_EQ(tun->receive_batch([](std::string_view) {}, 8), 0u);
  EXPECT_EQ(tun->uring_read_enters(), 0u);
}

TEST(UringReaderTest, KernelDeviceWithUringOnAnEmptyDeviceHandsUpNothing) {
  KernelDeviceConfig config{""};
  config.txqueuelen = 0;
  config.uring = true;
  std::unique_ptr<TunDevice> tun;
  try {
    tun = std::make_unique<TunDevice>(config);
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no TUN device here: " << e.what();
  }
  if (!tun->uring_reads()) {
    GTEST_SKIP() << "no io_uring here";
  }
  // Down, nothing queued: one enter whose READs all say EAGAIN, no drop.
  EXPECT_EQ(tun->receive_batch([](std::string_view) { ADD_FAILURE(); }, 64), 0u);
  EXPECT_EQ(tun->uring_read_enters(), 1u);
  EXPECT_EQ(tun->stats().receive_drops, 0u);
  EXPECT_EQ(tun->receive_batch([](std::string_view) { ADD_FAILURE(); }, 0), 0u);
  EXPECT_EQ(tun->uring_read_enters(), 1u);  // a batch of none enters nothing
}

}  // namespace
}  // namespace tinytcp::io

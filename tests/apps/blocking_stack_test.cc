// BlockingStack: two tinytcp stacks joined by the UDP tunnel on loopback (no
// privileges), used only through plain blocking file descriptors.

#include "common/blocking_stack.hh"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "util/random.hh"

namespace tinytcp::apps {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const wire::Ipv4Address kServer = wire::Ipv4Address::from_octets(169, 254, 0, 1);
const wire::Ipv4Address kClient = wire::Ipv4Address::from_octets(169, 254, 0, 2);
constexpr uint16_t kPort = 7000;

// A UDP port that was free a moment ago.
uint16_t free_udp_port() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

RuntimeOptions tunnel_end(wire::Ipv4Address address, uint16_t local, uint16_t peer) {
  RuntimeOptions options;
  options.dev = fmt::format("udp:127.0.0.1:{}@{}", peer, local);
  options.address = address;
  return options;
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    ASSERT_GT(n, 0) << std::strerror(errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::string read_to_eof(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

std::string random_bytes(size_t n) {
  Rng rng(seed_from_env("TINYTCP_SEED", 11));
  return rng.bytes(n);
}

class BlockingStackTest : public ::testing::Test {
 protected:
  BlockingStackTest()
      : server_port_(free_udp_port()),
        client_port_(free_udp_port()),
        server_(tunnel_end(kServer, server_port_, client_port_)),
        client_(tunnel_end(kClient, client_port_, server_port_)) {}

  uint16_t server_port_;
  uint16_t client_port_;
  BlockingStack server_;
  BlockingStack client_;
};

TEST_F(BlockingStackTest, BytesCrossBothWaysWithHalfClose) {
  server_.listen(kPort);
  const std::string request = random_bytes(3'000'000);
  std::string reply_seen;
  std::string client_error = "not looked up";
  std::thread client([&] {
    const int fd = client_.connect(kServer, kPort, seconds(5));
    write_all(fd, request);
    ::shutdown(fd, SHUT_WR);  // our FIN; the reply still comes back
    reply_seen = read_to_eof(fd);
    // At EOF the connection behind the client's own fd ended; it ended well.
    client_error = client_.last_error(fd);
    ::close(fd);
  });
  const int fd = server_.accept(kPort, seconds(5));
  ASSERT_GE(fd, 0);
  const std::string got = read_to_eof(fd);  // EOF: the client's FIN
  write_all(fd, "got " + std::to_string(got.size()));
  EXPECT_EQ(server_.last_error(fd), "");
  ::close(fd);
  client.join();
  EXPECT_EQ(got, request);
  EXPECT_EQ(reply_seen, "got 3000000");
  EXPECT_EQ(client_error, "");
}

TEST_F(BlockingStackTest, ConnectToAClosedPortIsRefused) {
  try {
    client_.connect(kServer, 9, seconds(5));
    FAIL() << "connected to a closed port";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach 169.254.0.1:9"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
  }
}

TEST_F(BlockingStackTest, ConnectGivesUpAfterTheTimeout) {
  // Nobody answers at this address: the SYNs go unanswered.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(
      client_.connect(wire::Ipv4Address::from_octets(169, 254, 0, 77), kPort, milliseconds(300)),
      std::runtime_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(3));
  // The stack is still usable afterwards.
  server_.listen(kPort);
  const int fd = client_.connect(kServer, kPort, seconds(5));
  EXPECT_GE(fd, 0);
  ::close(fd);
}

TEST_F(BlockingStackTest, AcceptTimesOutWithoutAClient) {
  server_.listen(kPort);
  EXPECT_EQ(server_.accept(kPort, milliseconds(50)), -1);
}

TEST_F(BlockingStackTest, ListeningTwiceOnAPortFails) {
  server_.listen(kPort);
  EXPECT_THROW(server_.listen(kPort), std::runtime_error);
}

TEST_F(BlockingStackTest, AppClosingItsFdClosesTheConnection) {
  server_.listen(kPort);
  const int fd = client_.connect(kServer, kPort, seconds(5));
  const int accepted = server_.accept(kPort, seconds(5));
  ASSERT_GE(accepted, 0);
  write_all(fd, "bye");
  ::close(fd);  // no shutdown first: the whole fd goes
  EXPECT_EQ(read_to_eof(accepted), "bye");
  ::close(accepted);
  // Both stacks let go of the connection (TIME-WAIT may linger on one side).
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (server_.with_host([](stack::Host& h) { return h.socket_count(); }) > 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(server_.with_host([](stack::Host& h) { return h.socket_count(); }), 1u);  // listener
}

TEST_F(BlockingStackTest, ResetReachesTheAppAsEofWithTheReason) {
  server_.listen(kPort);
  const int fd = client_.connect(kServer, kPort, seconds(5));
  const int accepted = server_.accept(kPort, seconds(5));
  ASSERT_GE(accepted, 0);
  // Abort the server's side from inside its stack: the client gets a RST.
  server_.with_host([&](stack::Host& host) {
    for (stack::SocketId id = 1; id < 16; ++id) {
      if (const auto info = host.info(id); info && !info->listener) {
        host.abort(id, Instant{} + seconds(0));
      }
    }
    return 0;
  });
  EXPECT_EQ(read_to_eof(fd), "");
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (client_.last_error(fd).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_NE(client_.last_error(fd).find("reset"), std::string::npos) << client_.last_error(fd);
  ::close(fd);
  ::close(accepted);
}

}  // namespace
}  // namespace tinytcp::apps

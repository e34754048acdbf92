// BlockingStack: two tinytcp stacks joined by the UDP tunnel on loopback (no
// privileges), used only through plain blocking file descriptors.

#include "runtime/blocking_stack.hh"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "util/random.hh"

namespace tinytcp::runtime {
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

// Open file descriptors of this process.
int open_fds() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d)) {
      n += e->d_name[0] != '.';
    }
    ::closedir(d);
    --n;  // the directory stream's own fd
  }
  return n;
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

// Issue 21 item 11: the app writes more than the stack's send buffer takes
// and closes its fd at once (no shutdown first). What is still in the pair
// then must reach the peer before our FIN, not be dropped under a normal FIN.
TEST_F(BlockingStackTest, ClosingWithBytesStillQueuedDeliversThemAll) {
  server_.listen(kPort);
  const std::string data = random_bytes(8 << 20);
  std::string got;
  std::string error = "not looked up";
  std::thread client([&] {
    const int fd = client_.connect(kServer, kPort, seconds(5));
    char buf[16384];
    for (;;) {  // a slow reader: the server's buffers stay full
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) {
        break;
      }
      got.append(buf, static_cast<size_t>(n));
      std::this_thread::sleep_for(milliseconds(1));
    }
    error = client_.last_error(fd);
    ::close(fd);
  });
  const int fd = server_.accept(kPort, seconds(5));
  ASSERT_GE(fd, 0);
  write_all(fd, data);
  ::close(fd);
  client.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  EXPECT_EQ(server_.stats().flushed_after_close, 1u);  // the case did arise
}

// Issue 21 item 12: connections nobody accepts wait in the Host's bounded
// backlog, not as an unbounded queue of socket pairs.
TEST_F(BlockingStackTest, UnacceptedConnectionsAreBoundedByTheBacklog) {
  constexpr int kBacklog = 2;
  constexpr int kClients = 8;
  server_.listen(kPort, kBacklog);
  const int before = open_fds();
  std::vector<int> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(client_.connect(kServer, kPort, seconds(5)));
  }
  std::this_thread::sleep_for(milliseconds(300));  // the last ACKs reach the server
  // Each client holds its fd and at most its bridge's end; the server at most
  // a pair per connection it queued for accept().
  EXPECT_LE(open_fds() - before, 2 * kClients + 2 * kBacklog);
  int accepted = 0;
  for (int fd; (fd = server_.accept(kPort, milliseconds(300))) >= 0;) {
    ++accepted;
    ::close(fd);
  }
  EXPECT_EQ(accepted, 2 * kBacklog);  // ours, then the Host's backlog; the rest were reset
  for (const int fd : clients) {
    ::close(fd);
  }
}

// Issue 21 item 12: running out of file descriptors while accepting does not
// end the process; the connection is taken once fds are free again.
TEST_F(BlockingStackTest, RunningOutOfFdsWhileAcceptingIsSurvived) {
  server_.listen(kPort);
  {
    // A whole connection first: the sanitizers' type checks then have their
    // cache warm and need no fds of their own while there are none.
    const int warm = client_.connect(kServer, kPort, seconds(5));
    const int warm_accepted = server_.accept(kPort, seconds(5));
    ASSERT_GE(warm_accepted, 0);
    write_all(warm, "warm");
    ::shutdown(warm, SHUT_WR);
    EXPECT_EQ(read_to_eof(warm_accepted), "warm");
    ::close(warm_accepted);
    ::close(warm);
  }
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  // Leave exactly two fds free: the client's pair fits, the server's does not.
  std::vector<int> fillers;
  for (int fd; (fd = ::dup(0)) >= 0;) {
    fillers.push_back(fd);
    if (fillers.size() > 100000) {
      break;
    }
  }
  rlimit tight = old;
  tight.rlim_cur = static_cast<rlim_t>(fillers.back()) + 1;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  for (int i = 0; i < 2; ++i) {
    ::close(fillers.back());
    fillers.pop_back();
  }
  const int fd = client_.connect(kServer, kPort, seconds(5));
  ASSERT_GE(fd, 0);
  std::this_thread::sleep_for(milliseconds(300));  // the server fails to make a pair meanwhile
  for (const int f : fillers) {
    ::close(f);
  }
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);
  EXPECT_GE(server_.stats().pair_failures, 1u);  // EMFILE did happen
  const int accepted = server_.accept(kPort, seconds(5));
  ASSERT_GE(accepted, 0);
  write_all(fd, "still here");
  ::shutdown(fd, SHUT_WR);
  EXPECT_EQ(read_to_eof(accepted), "still here");
  ::close(accepted);
  ::close(fd);
}

// Issue 21 item 12: connections queued for accept() are closed with the stack.
TEST(BlockingStackLifetimeTest, QueuedConnectionsAreClosedOnDestruction) {
  const uint16_t a = free_udp_port();
  const uint16_t b = free_udp_port();
  const int before = open_fds();
  {
    BlockingStack server(tunnel_end(kServer, a, b));
    BlockingStack client(tunnel_end(kClient, b, a));
    server.listen(kPort);
    const int fd = client.connect(kServer, kPort, seconds(5));
    std::this_thread::sleep_for(milliseconds(300));  // the server queues it
    ::close(fd);
  }
  EXPECT_EQ(open_fds(), before);
}

// A server that writes its answer, closes its fd and exits at once (the
// HTTP example with --once): the stack's destructor still delivers the
// answer and the FIN; it used to reset the connection.
TEST(BlockingStackLifetimeTest, DestroyingTheStackDeliversWhatClosedFdsWrote) {
  const uint16_t a = free_udp_port();
  const uint16_t b = free_udp_port();
  BlockingStack client(tunnel_end(kClient, b, a));
  auto server = std::make_unique<BlockingStack>(tunnel_end(kServer, a, b));
  server->listen(kPort);
  const std::string answer = random_bytes(512 << 10);
  const int fd = client.connect(kServer, kPort, seconds(5));
  const int accepted = server->accept(kPort, seconds(5));
  ASSERT_GE(accepted, 0);
  write_all(accepted, answer);
  ::close(accepted);
  const auto start = std::chrono::steady_clock::now();
  server.reset();  // right away: most of the answer is still in the pair
  // It returned when the answer and the FIN were acknowledged, not at the
  // linger's end (the client's FIN waits for the test to close fd).
  EXPECT_LT(std::chrono::steady_clock::now() - start, BlockingStack::kCloseLinger);
  EXPECT_TRUE(read_to_eof(fd) == answer);
  EXPECT_EQ(client.last_error(fd), "");
  ::close(fd);
}

// A connection whose app still holds its fd when the stack goes is closed
// the same way: the peer reads what was written, then EOF.
TEST(BlockingStackLifetimeTest, DestroyingTheStackClosesOpenConnectionsWithAFin) {
  const uint16_t a = free_udp_port();
  const uint16_t b = free_udp_port();
  BlockingStack client(tunnel_end(kClient, b, a));
  auto server = std::make_unique<BlockingStack>(tunnel_end(kServer, a, b));
  server->listen(kPort);
  const int fd = client.connect(kServer, kPort, seconds(5));
  const int accepted = server->accept(kPort, seconds(5));
  ASSERT_GE(accepted, 0);
  write_all(accepted, "last words");
  server.reset();
  EXPECT_EQ(read_to_eof(fd), "last words");
  EXPECT_EQ(client.last_error(fd), "");
  ::close(accepted);
  ::close(fd);
}

}  // namespace
}  // namespace tinytcp::runtime

// Robust session ends hand bytes over without a copy of the relay's own
// (StreamEnd::offer, received, consume_received: tt-tunnel's relay), over
// kernel TCP carriers on the loopback; byte for byte, both directions.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/kernel_tcp.hh"
#include "common/stream_client.hh"
#include "common/stream_server.hh"
#include "common/stream_transport.hh"
#include "io/system_clock.hh"

namespace tinytcp::apps {
namespace {

using namespace std::chrono_literals;

std::string pattern(size_t n, char salt) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>((i * 131 + static_cast<size_t>(salt)) % 251);
  }
  return s;
}

uint16_t unused_port() {
  const int fd = listen_tcp(0, 1);
  const uint16_t port = local_port(fd);
  ::close(fd);
  return port;
}

// Steps an end without taking its input (the relay leaves it in place).
StepOutcome step_in_place(StreamEnd& end) {
  return end.step(PumpIo{[] { return std::string_view(); },
                         [](size_t) {},
                         [](std::string_view) { ADD_FAILURE() << "input pulled"; },
                         [] { return false; },
                         [] { return false; },
                         {}});
}

class RobustHandoffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TransportOptions options;
    options.transport = "kernel";
    options.robust = true;
    const uint16_t port = unused_port();
    server_ = serve_streams(options, HostPort{"127.0.0.1", port}, ServerLimits{});
    client_ = connect_streams(options, HostPort{"127.0.0.1", port});
    std::string error;
    client_end_ = client_->connect(error);
    ASSERT_NE(client_end_, nullptr) << error;
    for (int i = 0; i < 2000 && !server_end_; ++i) {
      pass();
      server_end_ = server_->accept();
    }
    ASSERT_NE(server_end_, nullptr);
  }

  void pass() {
    client_->wait(0ms);
    server_->wait(1ms);
    if (client_end_) {
      step_in_place(*client_end_);
    }
    if (server_end_) {
      step_in_place(*server_end_);
    }
  }

  // Offers `data` at `from` until it took all, and collects it in place at `to`.
  std::string move(StreamEnd& from, StreamEnd& to, const std::string& data) {
    std::string got;
    size_t offered = 0;
    for (int i = 0; i < 20000 && got.size() < data.size(); ++i) {
      offered += from.offer(std::string_view(data).substr(offered));
      pass();
      for (std::string_view in = to.received(); !in.empty(); in = to.received()) {
        got.append(in);
        to.consume_received(in.size());
      }
    }
    EXPECT_EQ(offered, data.size());
    return got;
  }

  std::unique_ptr<StreamServer> server_;
  std::unique_ptr<StreamClient> client_;
  std::unique_ptr<StreamEnd> client_end_;
  std::unique_ptr<StreamEnd> server_end_;
};

TEST_F(RobustHandoffTest, OfferedBytesArriveInPlaceBothWays) {
  ASSERT_TRUE(client_end_->shows_input());
  ASSERT_TRUE(server_end_->shows_input());
  // Past the ring's first wrap (256 KiB) and many DATA frames.
  const std::string up = pattern(700 * 1024 + 3, 'u');
  const std::string down = pattern(300 * 1024 + 7, 'd');
  EXPECT_EQ(move(*client_end_, *server_end_, up), up);
  EXPECT_EQ(move(*server_end_, *client_end_, down), down);
  EXPECT_EQ(client_end_->session_stats()->bytes_written, up.size());
  EXPECT_EQ(client_end_->session_stats()->bytes_read, down.size());
}

TEST(StreamEndHandoffTest, KernelStreamsTakeAndShowNothing) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(fd, 0);
  auto end = make_kernel_stream(fd, std::make_shared<PollSet>(), wire::Ipv4Address{}, 1);
  EXPECT_EQ(end->offer("abc"), 0U);
  EXPECT_FALSE(end->shows_input());
  EXPECT_TRUE(end->received().empty());
}

}  // namespace
}  // namespace tinytcp::apps

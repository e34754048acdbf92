// SYN cookies (RFC 4987 §3.6): a listener whose SYN queue is full still
// accepts real connections, with their options, and keeps no state for the
// SYNs it answers.

#include <gtest/gtest.h>

#include <string>

#include "stack/datagram_codec.hh"
#include "stack/host.hh"
#include "unit/stack/two_hosts.hh"
#include "util/buffer.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

class SynCookieHosts : public TwoHosts {
 protected:
  // A SYN into a from b's address, port `port`, whose SYN-ACK is lost.
  void spoofed_syn(uint16_t port) { TwoHosts::spoofed_syn(FourTuple{kB, port, kA, 80}); }
};

TEST_F(SynCookieHosts, FullSynQueueStillAcceptsWithEveryOption) {
  const auto listener = a_.listen(80, 1);
  ASSERT_TRUE(listener);
  spoofed_syn(7);
  ASSERT_EQ(a_.connection_count(), 1u);  // the SYN queue is full
  const auto connected = connect_to(*listener, kA, 80);
  const SocketId client = connected.first;
  const SocketId server = connected.second;
  ASSERT_NE(server, 0u);
  EXPECT_EQ(a_.stats().syn_cookies_sent, 1u);
  EXPECT_EQ(a_.stats().syn_cookies_accepted, 1u);
  // The options came back through the cookie and the timestamp echo.
  const tcp::TcpConnection* conn = a_.connection(server);
  ASSERT_NE(conn, nullptr);
  EXPECT_EQ(conn->state(), tcp::TcpState::Established);
  EXPECT_EQ(conn->sender().max_payload(), 1460u - 12u);            // MSS from the table, timestamps
  EXPECT_EQ(conn->sender().peer_options().send_window_shift, 1u);  // b's 64 KiB buffer
  EXPECT_TRUE(conn->sender().peer_options().sack);
  EXPECT_TRUE(conn->sender().peer_options().timestamps);
  // Data both ways, and the window is scaled (a 64 KiB buffer needs shift 1).
  std::string data(200'000, 'x');
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>('a' + i % 26);
  }
  size_t written = 0;
  std::string got;
  ASSERT_TRUE(stream_through(client, server, data, written, got));
  EXPECT_EQ(got, data);
  EXPECT_EQ(a_.write(server, "reply", now_), 5u);
  ASSERT_TRUE(run_until([&] { return b_.info(client)->readable_bytes == 5; }));
}

TEST_F(SynCookieHosts, ForgedCookieIsResetAndMakesNoSocket) {
  const auto listener = a_.listen(80, 1);
  spoofed_syn(7);
  spoofed_syn(8);  // answered with a cookie: the listener accepts cookies now
  ASSERT_EQ(a_.stats().syn_cookies_sent, 1u);
  const size_t sockets = a_.socket_count();
  tcp::TcpSegment ack;
  ack.ack = true;
  ack.seqno = tcp::Wrap32{12345u + 8 + 1};
  ack.ackno = tcp::Wrap32{0xdeadbeef};
  ack.window = 100;
  spoof_to_a(ack, FourTuple{kB, 8, kA, 80});
  EXPECT_EQ(a_.stats().drops[HostDrop::BadCookie], 1u);
  EXPECT_EQ(a_.stats().resets_sent, 1u);
  EXPECT_EQ(a_.socket_count(), sockets);
  EXPECT_FALSE(a_.accept(*listener));
}

TEST_F(SynCookieHosts, AckWithoutRecentCookiesIsAPlainReset) {
  ASSERT_TRUE(a_.listen(80, 1));
  tcp::TcpSegment ack;
  ack.ack = true;
  ack.seqno = tcp::Wrap32{1};
  ack.ackno = tcp::Wrap32{2};
  spoof_to_a(ack, FourTuple{kB, 9, kA, 80});
  EXPECT_EQ(a_.stats().drops[HostDrop::BadCookie], 0u);
  EXPECT_EQ(a_.stats().drops[HostDrop::NoConnection], 1u);
}

TEST_F(SynCookieHosts, ManySpoofedSynsKeepNoState) {
  ASSERT_TRUE(a_.listen(80, 4));
  for (uint16_t port = 1000; port < 11000; ++port) {
    spoofed_syn(port);
  }
  EXPECT_EQ(a_.connection_count(), 4u);
  EXPECT_EQ(a_.stats().syn_cookies_sent, 10'000u - 4u);
}

TEST_F(SynCookieHosts, CookiesOffDropsAsBefore) {
  HostConfig c = config_for(kA);
  c.syn_cookies = false;
  Host host(c, [](std::string_view) {});
  ASSERT_TRUE(host.listen(80, 1));
  for (uint16_t port = 1; port <= 3; ++port) {
    tcp::TcpSegment syn;
    syn.syn = true;
    syn.seqno = tcp::Wrap32{port};
    std::string buf(100, '\0');
    BufferWriter w(buf.data(), buf.size());
    ASSERT_TRUE(serialize_datagram(syn, FourTuple{kB, port, kA, 80}, 64, w));
    host.receive_datagram(w.written(), now_);
  }
  EXPECT_EQ(host.stats().drops[HostDrop::SynBacklogFull], 2u);
  EXPECT_EQ(host.stats().syn_cookies_sent, 0u);
}

}  // namespace
}  // namespace tinytcp::stack

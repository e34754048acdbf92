// Connections that go away: TIME-WAIT kept compactly outside max_sockets
// (with RFC 6191 reuse), orphaned FIN-WAIT-2 timing out, and an orphan
// facing a zero window giving up.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "stack/datagram_codec.hh"
#include "stack/host.hh"
#include "unit/stack/two_hosts.hh"
#include "util/buffer.hh"
#include "wire/ipv4.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

HostConfig small_server(size_t max_time_wait = 262144) {
  HostConfig c = config_for(kA);
  c.max_sockets = 16;
  c.max_time_wait = max_time_wait;
  return c;
}

class TimeWaitHosts : public TwoHosts {
 protected:
  explicit TimeWaitHosts(const HostConfig& a = small_server()) : TwoHosts(a, config_for(kB)) {}

  // b asks, a answers and closes first, b reads and closes (or only shuts
  // its side, keeping the socket, with `client_keeps`). Returns b's socket.
  std::optional<SocketId> exchange(SocketId listener, bool client_keeps = false) {
    const auto client = b_.connect(kA, 80, now_);
    if (!client) {
      return std::nullopt;
    }
    const SocketId c = *client;
    if (!run_until([&] { return b_.info(c)->state == tcp::TcpState::Established; })) {
      return std::nullopt;
    }
    b_.write(c, "req", now_);
    std::optional<SocketId> server;
    if (!run_until([&] {
          server = server ? server : a_.accept(listener);
          return server && a_.info(*server)->readable_bytes == 3;
        })) {
      return std::nullopt;
    }
    EXPECT_EQ(read_all(a_, *server), "req");
    a_.write(*server, "resp", now_);
    a_.close(*server, now_);
    if (!run_until([&] { return b_.info(c)->state == tcp::TcpState::CloseWait; })) {
      return std::nullopt;
    }
    EXPECT_EQ(read_all(b_, c), "resp");
    if (client_keeps) {
      b_.shutdown_write(c, now_);
      run_until([&] { return b_.info(c)->state == tcp::TcpState::Closed; });
    } else {
      b_.close(c, now_);
      run_until([&] { return b_.socket_count() == 0; });
    }
    return c;
  }

  // A segment from b's side of `tuple` (local: b) straight into a, with
  // whatever a answers (to b) returned parsed.
  std::vector<tcp::TcpSegment> inject(const tcp::TcpSegment& segment, const FourTuple& tuple) {
    std::string buf(200, '\0');
    BufferWriter w(buf.data(), buf.size());
    EXPECT_TRUE(serialize_datagram(segment, tuple, 64, w));
    const size_t before = link_.size();
    a_.receive_datagram(w.written(), now_);
    std::vector<tcp::TcpSegment> out;
    replies_.clear();
    for (size_t i = before; i < link_.size(); ++i) {
      replies_.push_back(link_[i].bytes);
    }
    link_.resize(before);
    for (const std::string& bytes : replies_) {
      const auto ip = wire::parse_ipv4(bytes);
      EXPECT_TRUE(ip);
      const auto in = parse_segment(*ip);
      EXPECT_TRUE(in);
      out.push_back(in->segment);
    }
    return out;
  }

  std::vector<std::string> replies_;  // the bytes inject()'s segments view
};

TEST_F(TimeWaitHosts, CloseFirstServerChurnsPastMaxSockets) {
  const auto listener = a_.listen(80);
  ASSERT_TRUE(listener);
  size_t most_in_time_wait = 0;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(exchange(*listener)) << "exchange " << i;
    most_in_time_wait = std::max(most_in_time_wait, a_.time_wait_count());
  }
  // Every exchange takes a few ms and TIME-WAIT 1 s (msl 500 ms): far more
  // TIME-WAITs at once than the 16 sockets a may have.
  EXPECT_GT(most_in_time_wait, 100u);
  EXPECT_EQ(a_.stats().drops[HostDrop::SocketLimit], 0u);
  EXPECT_EQ(a_.stats().time_wait_overflow, 0u);
  EXPECT_EQ(a_.stats().time_wait_entered, 2000u);
  EXPECT_EQ(a_.socket_count(), 1u);  // the listener
  run_for(1s);
  EXPECT_EQ(a_.time_wait_count(), 0u);
  EXPECT_FALSE(a_.next_deadline().has_value());
}

TEST_F(TimeWaitHosts, RetransmittedFinIsAckedAndRestartsTheTimer) {
  const auto pair = connect_pair();  // clang 14: lambdas cannot capture bindings
  const SocketId client = pair.first;
  const SocketId server = pair.second;
  a_.close(server, now_);
  ASSERT_TRUE(run_until([&] { return b_.info(client)->state == tcp::TcpState::CloseWait; }));
  drop_to_b_ = true;  // a's last ACK is lost: b's FIN comes again
  b_.close(client, now_);
  ASSERT_TRUE(run_until([&] { return a_.stats().time_wait_entered == 1; }));
  drop_to_b_ = false;
  ASSERT_TRUE(run_until([&] { return a_.stats().time_wait_acks == 1; }, 5s));
  const Instant retransmitted = now_;
  ASSERT_TRUE(run_until([&] { return b_.socket_count() == 0; }));  // the ACK closed b
  run_until([] { return false; }, retransmitted + 995ms - now_);
  EXPECT_EQ(a_.time_wait_count(), 1u);  // 2 MSL from the retransmitted FIN
  run_for(10ms);
  EXPECT_EQ(a_.time_wait_count(), 0u);
}

TEST_F(TimeWaitHosts, SynWithANewerTimestampReusesTheTuple) {
  const auto listener = a_.listen(80);
  const auto client = exchange(*listener, true);
  ASSERT_TRUE(client);
  ASSERT_EQ(a_.time_wait_count(), 1u);
  const tcp::TcpConnection& old = *b_.connection(*client);
  const FourTuple tuple = b_.info(*client)->tuple;  // from b: the SYN's source
  const tcp::Wrap32 a_snd_nxt = *old.receiver().ackno();

  tcp::TcpSegment syn;
  syn.syn = true;
  syn.seqno = tcp::Wrap32{7};  // below RCV.NXT in all likelihood: only the timestamp says new
  syn.window = 65535;
  syn.options.mss = 1460;
  const uint32_t tsval = old.sender().timestamp_value(now_);
  syn.options.timestamps = tcp::Timestamps{tsval - 100'000, 0};  // older than TS.Recent
  auto answer = inject(syn, tuple);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_FALSE(answer[0].syn);  // an ACK of the old incarnation
  EXPECT_EQ(answer[0].seqno, a_snd_nxt);
  EXPECT_EQ(a_.stats().time_wait_reused, 0u);
  EXPECT_EQ(a_.time_wait_count(), 1u);

  syn.options.timestamps = tcp::Timestamps{tsval + 1, 0};  // newer: RFC 6191
  answer = inject(syn, tuple);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_TRUE(answer[0].syn && answer[0].ack);
  EXPECT_EQ(answer[0].seqno, a_snd_nxt + 65537u);  // past the old sequence space
  EXPECT_EQ(answer[0].ackno, syn.seqno + 1);
  EXPECT_EQ(a_.stats().time_wait_reused, 1u);
  EXPECT_EQ(a_.time_wait_count(), 0u);
  EXPECT_EQ(a_.connection_count(), 1u);
}

TEST_F(TimeWaitHosts, SynWithoutTimestampsNeedsAHigherSequenceNumber) {
  const auto listener = a_.listen(80);
  const auto client = exchange(*listener, true);
  ASSERT_TRUE(client);
  const tcp::TcpConnection& old = *b_.connection(*client);
  const FourTuple tuple = b_.info(*client)->tuple;
  const tcp::Wrap32 rcv_nxt = old.sender().next_seqno();  // a's RCV.NXT

  tcp::TcpSegment syn;
  syn.syn = true;
  syn.window = 65535;
  syn.seqno = rcv_nxt - 1;
  auto answer = inject(syn, tuple);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_FALSE(answer[0].syn);
  EXPECT_EQ(answer[0].ackno, rcv_nxt);
  // A second one within the rate limit gets nothing.
  EXPECT_TRUE(inject(syn, tuple).empty());
  EXPECT_EQ(a_.stats().time_wait_acks, 1u);

  syn.seqno = rcv_nxt + 1000;
  answer = inject(syn, tuple);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_TRUE(answer[0].syn && answer[0].ack);
  EXPECT_EQ(a_.stats().time_wait_reused, 1u);
}

TEST_F(TimeWaitHosts, RstAtRcvNxtEndsTimeWaitAndOthersDoNot) {
  const auto listener = a_.listen(80);
  const auto client = exchange(*listener, true);
  ASSERT_TRUE(client);
  const FourTuple tuple = b_.info(*client)->tuple;
  const tcp::Wrap32 rcv_nxt = b_.connection(*client)->sender().next_seqno();
  tcp::TcpSegment rst;
  rst.rst = true;
  rst.seqno = rcv_nxt + 5000;
  EXPECT_TRUE(inject(rst, tuple).empty());
  EXPECT_EQ(a_.time_wait_count(), 1u);
  rst.seqno = rcv_nxt;
  EXPECT_TRUE(inject(rst, tuple).empty());
  EXPECT_EQ(a_.time_wait_count(), 0u);
  EXPECT_EQ(a_.stats().time_wait_reset, 1u);
}

class FullTimeWaitTable : public TimeWaitHosts {
 protected:
  FullTimeWaitTable() : TimeWaitHosts(small_server(1)) {}
};

TEST_F(FullTimeWaitTable, ClosesWithoutTimeWaitAndCountsIt) {
  const auto listener = a_.listen(80);
  ASSERT_TRUE(exchange(*listener));
  ASSERT_TRUE(exchange(*listener));
  EXPECT_EQ(a_.time_wait_count(), 1u);
  EXPECT_EQ(a_.stats().time_wait_overflow, 1u);
  EXPECT_EQ(a_.socket_count(), 1u);
}

TEST_F(TimeWaitHosts, OrphanInFinWait2IsResetAfterTheTimeout) {
  const auto pair = connect_pair();  // clang 14: lambdas cannot capture bindings
  const SocketId client = pair.first;
  const SocketId server = pair.second;
  a_.close(server, now_);  // b never closes its side
  ASSERT_TRUE(run_until([&] { return b_.info(client)->state == tcp::TcpState::CloseWait; }));
  run_for(59s);
  EXPECT_EQ(a_.socket_count(), 2u);  // the listener and the orphan in FIN-WAIT-2
  run_for(2s);
  EXPECT_EQ(a_.socket_count(), 1u);
  EXPECT_EQ(b_.info(client)->state, tcp::TcpState::Closed);
  EXPECT_EQ(b_.info(client)->close_reason, tcp::CloseReason::ResetByPeer);
}

TEST_F(TimeWaitHosts, HalfClosedConnectionTheAppHoldsStaysInFinWait2) {
  const auto pair = connect_pair();  // clang 14: lambdas cannot capture bindings
  const SocketId client = pair.first;
  const SocketId server = pair.second;
  a_.shutdown_write(server, now_);
  run_for(5min);
  EXPECT_EQ(a_.info(server)->state, tcp::TcpState::FinWait2);
  EXPECT_EQ(b_.info(client)->state, tcp::TcpState::CloseWait);
}

TEST_F(TimeWaitHosts, OrphanFacingAShutWindowGivesUp) {
  const auto pair = connect_pair();  // clang 14: lambdas cannot capture bindings
  const SocketId client = pair.first;
  const SocketId server = pair.second;
  // b never reads: its 64 KiB buffer fills and its window shuts.
  const std::string data(64 * 1024, 'x');
  size_t written = 0;
  run_until(
      [&] {
        written += a_.write(server, std::string_view(data).substr(written % data.size()), now_);
        return written >= 2 * data.size() || b_.info(client)->readable_bytes >= data.size();
      },
      10s);
  ASSERT_GE(b_.info(client)->readable_bytes, 60'000u);
  a_.close(server, now_);  // FIN-WAIT-1 with data behind a zero window
  const uint64_t probes_before = a_.stats().datagrams_out;
  // b answers every probe; an orphan stops after max_orphan_retransmissions
  // (8) probes, backing off from the RTO: well within 10 minutes.
  run_for(10min);
  EXPECT_EQ(a_.socket_count(), 1u);
  EXPECT_LT(a_.stats().datagrams_out - probes_before, 20u);
}

}  // namespace
}  // namespace tinytcp::stack

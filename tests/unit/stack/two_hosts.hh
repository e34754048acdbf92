#pragma once

// The fixture of the Host tests: two Hosts, a (169.254.1.1) and b
// (169.254.1.2), joined by a link with a fixed one-way delay on a manual
// clock, with verb helpers.

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stack/datagram_codec.hh"
#include "stack/host.hh"
#include "util/buffer.hh"

namespace tinytcp::stack {

using namespace std::chrono_literals;

inline const wire::Ipv4Address kA = wire::Ipv4Address::from_octets(169, 254, 1, 1);
inline const wire::Ipv4Address kB = wire::Ipv4Address::from_octets(169, 254, 1, 2);

inline HostConfig config_for(wire::Ipv4Address address, bool autotune = false) {
  HostConfig c;
  c.address = address;
  c.secret = "0123456789abcdef-test-secret";
  c.tcp.msl = 500ms;
  c.tcp.receive_buffer_bytes = 64 * 1024;
  c.tcp.send_buffer_bytes = 64 * 1024;
  if (autotune) {
    c.tcp.send_buffer_bytes = 1 << 20;
    c.tcp.autotune_send_buffer = true;
    c.tcp.send_buffer_floor = 4096;
  }
  return c;
}

// Two Hosts joined by a link with a fixed one-way delay, on a manual clock.
class TwoHosts : public ::testing::Test {
 protected:
  explicit TwoHosts(bool autotune = false)
      : TwoHosts(config_for(kA, autotune), config_for(kB, autotune)) {}
  TwoHosts(const HostConfig& a, const HostConfig& b)
      : a_(a, [this](std::string_view d) { send(kB, d); }),
        b_(b, [this](std::string_view d) { send(kA, d); }) {
    a_.set_event_callback([this](SocketId id, SocketEvent e) { a_events_.emplace_back(id, e); });
    b_.set_event_callback([this](SocketId id, SocketEvent e) { b_events_.emplace_back(id, e); });
  }

  void send(wire::Ipv4Address to, std::string_view datagram) {
    ++sent_;
    if (to == kB && a_out_ && a_out_(datagram)) {
      return;  // taken by the test (a device that refused it)
    }
    if (to == kB && drop_to_b_) {
      return;
    }
    if (drop_next_ > 0) {
      --drop_next_;
      return;
    }
    link_.push_back({now_ + delay_, to, std::string(datagram)});
  }

  // Advances the clock event by event until `done()` or `limit` passes.
  template <typename Pred>
  bool run_until(Pred done, Duration limit = 10s) {
    const Instant end = now_ + limit;
    while (!done()) {
      std::optional<Instant> next;
      if (!link_.empty()) {
        next = link_.front().at;
      }
      for (Host* h : {&a_, &b_}) {
        if (const auto d = h->next_deadline(); d && (!next || *d < *next)) {
          next = d;
        }
      }
      if (!next || *next > end) {
        now_ = end;
        return done();
      }
      now_ = std::max(now_, *next);
      while (!link_.empty() && link_.front().at <= now_) {
        const auto packet = std::move(link_.front());
        link_.pop_front();
        (packet.to == kA ? a_ : b_).receive_datagram(packet.bytes, now_);
      }
      a_.tick(now_);
      b_.tick(now_);
    }
    return true;
  }
  void run_for(Duration d) {
    run_until([] { return false; }, d);
  }

  std::string read_all(Host& h, SocketId id) {
    std::string out;
    char buf[4096];
    for (size_t n; (n = h.read(id, buf, sizeof buf, now_)) > 0;) {
      out.append(buf, n);
    }
    return out;
  }

  // A connected pair: client on b, server on a.
  std::pair<SocketId, SocketId> connect_pair(uint16_t port = 80) {
    const auto listener = a_.listen(port);
    EXPECT_TRUE(listener);
    listener_ = listener ? *listener : 0;
    return connect_to(listener_, kA, port);
  }

  // b connects to a's `address`:`port`, where a's `listener` listens, and
  // runs until a accepted and b is established: the pair (client on b,
  // server on a), 0 (and a failed expectation) for what did not happen.
  std::pair<SocketId, SocketId> connect_to(SocketId listener, const IpAddress& address,
                                           uint16_t port) {
    const auto client = b_.connect(address, port, now_);
    EXPECT_TRUE(client);
    if (!client) {
      return {0, 0};
    }
    std::optional<SocketId> server;
    EXPECT_TRUE(run_until([&] {
      server = server ? server : a_.accept(listener);
      return server && b_.info(*client)->state == tcp::TcpState::Established;
    }));
    return {*client, server.value_or(0)};
  }

  // Writes `data` from `written` on through b's `client` and reads a's
  // `server` into `got` until all of it arrived (false: not within 60 s).
  bool stream_through(SocketId client, SocketId server, const std::string& data, size_t& written,
                      std::string& got) {
    return run_until(
        [&] {
          written += b_.write(client, std::string_view(data).substr(written), now_);
          got += read_all(a_, server);
          return got.size() == data.size();
        },
        60s);
  }

  // `segment` into a from `tuple` (as its sender sees it), a's answers lost:
  // a segment from a spoofed address, or one b never sent.
  void spoof_to_a(const tcp::TcpSegment& segment, const FourTuple& tuple) {
    std::string buf(120 + segment.payload.size(), '\0');
    BufferWriter w(buf.data(), buf.size());
    ASSERT_TRUE(serialize_datagram(segment, tuple, 64, w));
    drop_to_b_ = true;
    a_.receive_datagram(w.written(), now_);
    drop_to_b_ = false;
  }

  // A spoofed SYN, seqno 12345 plus its source port, announcing `mss`: its
  // SYN-ACK is lost, so the half-open connection stays in a's SYN queue, as
  // in a SYN flood.
  void spoofed_syn(const FourTuple& tuple, uint16_t mss = 1460) {
    tcp::TcpSegment syn;
    syn.syn = true;
    syn.seqno = tcp::Wrap32{12345u + tuple.local_port};
    syn.window = 65535;
    syn.options.mss = mss;
    spoof_to_a(syn, tuple);
  }

  bool saw(const std::vector<std::pair<SocketId, SocketEvent>>& events, SocketId id,
           SocketEvent e) {
    for (const auto& [i, ev] : events) {
      if (i == id && ev == e) {
        return true;
      }
    }
    return false;
  }

  struct Packet {
    Instant at;
    wire::Ipv4Address to;
    std::string bytes;
  };
  Instant now_;
  Duration delay_ = 1ms;
  int drop_next_ = 0;
  // Sees a's datagrams to b first; true: it took the datagram.
  std::function<bool(std::string_view)> a_out_;
  size_t a_datagrams_ = 0;
  size_t refuse_at_ = 0;
  std::vector<std::string> refused_;
  bool drop_to_b_ = false;  // everything a sends is lost
  uint64_t sent_ = 0;
  std::deque<Packet> link_;
  Host a_;
  Host b_;
  SocketId listener_ = 0;
  std::vector<std::pair<SocketId, SocketEvent>> a_events_;
  std::vector<std::pair<SocketId, SocketEvent>> b_events_;
};

}  // namespace tinytcp::stack

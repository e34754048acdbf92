// Feeds arbitrary segments into a TcpConnection in whatever state the input
// drives it to. The input is a list of records; each either builds a segment
// (flags, sequence and acknowledgment numbers near the connection's own, window,
// options, payload) and hands it to receive(), advances the clock and ticks,
// or makes the application write, read, close or abort, orphans the
// connection, or hands it an ICMP fragmentation-needed (path MTU) quoting a
// sequence number near SND.UNA. Time moves by a fuzzed amount or straight to
// next_deadline(), so the RTO, SYN, persist, keepalive, delayed-ACK,
// FIN-WAIT-2 and TIME-WAIT timers fire. Checks invariants of our own: no
// crash, no sanitizer report, streams within their capacity, no segment
// whose payload and options exceed the MSS we announced, and no timer that
// stays due however often the connection ticks at its deadline.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tcp/tcp_connection.hh"
#include "util/buffer.hh"
#include "util/check.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tinytcp;
  using namespace tinytcp::tcp;
  BufferReader in(std::string_view(reinterpret_cast<const char*>(data), size));
  TcpConfig config;
  config.receive_buffer_bytes = 4096 + in.u16();
  config.send_buffer_bytes = 4096;
  config.mss = static_cast<uint16_t>(64 + in.u16() % 2000);
  const uint8_t switches = in.u8();
  config.window_scale = (switches & 1) != 0;
  config.sack = (switches & 2) != 0;
  config.timestamps = (switches & 4) != 0;
  config.delayed_ack = (switches & 8) != 0;
  config.msl = std::chrono::milliseconds(100);
  config.keepalive = (switches & 32) != 0;
  config.keepalive_idle = std::chrono::seconds(3);
  config.keepalive_interval = std::chrono::seconds(1);
  config.keepalive_probes = 2;
  config.fin_wait2_timeout = std::chrono::seconds(5);
  static const char* const kCongestion[] = {"reno", "newreno", "cubic", "bbr"};
  config.congestion_control = kCongestion[switches >> 6];
  uint64_t sent = 0;
  TcpConnection conn(config, Wrap32{in.u32()}, [&](const TcpSegment& s) {
    ++sent;
    TINYTCP_CHECK(s.syn || s.payload.size() + non_syn_option_bytes(s.options) <= config.mss);
    TINYTCP_CHECK(!(s.syn && s.fin));
  });
  Instant now;
  if (switches & 16) {
    conn.listen();
  } else {
    conn.connect(now);
  }
  static const std::string payload(3000, 'p');
  while (in.ok() && in.remaining() > 0) {
    const uint8_t op = in.u8();
    switch (op % 6) {
      case 0: {
        TcpSegment s;
        const uint8_t flags = in.u8();
        s.syn = (flags & 1) != 0;
        s.ack = (flags & 2) != 0;
        s.fin = (flags & 4) != 0 && !s.syn;
        s.rst = (flags & 8) != 0;
        const Wrap32 rcv = conn.receiver().ackno().value_or(Wrap32{in.u32()});
        s.seqno = (flags & 16) ? Wrap32{in.u32()} : rcv + static_cast<uint32_t>(in.u16()) - 512;
        s.ackno = (flags & 32) ? Wrap32{in.u32()}
                               : conn.sender().oldest_unacked() + static_cast<uint32_t>(in.u8());
        s.window = in.u16();
        if (flags & 64) {
          s.options.mss = in.u16();
          s.options.window_scale = in.u8();
          s.options.sack_permitted = true;
        }
        if (flags & 128) {
          s.options.timestamps = Timestamps{in.u32(), in.u32()};
        }
        s.options.sack_count = static_cast<uint8_t>(in.u8() % 5);
        for (size_t i = 0; i < s.options.sack_count; ++i) {
          s.options.sack[i] = {rcv + in.u16(), rcv + in.u16()};
        }
        s.payload = std::string_view(payload).substr(0, in.u16() % payload.size());
        conn.receive(s, now);
        break;
      }
      case 1:
        now += std::chrono::milliseconds(in.u16());
        conn.tick(now);
        break;
      case 2: {
        const uint8_t what = in.u8();
        if (what < 200) {
          conn.outbound().push(std::string_view(payload).substr(0, what * 10u));
        } else if (what < 250) {
          conn.inbound().pop(conn.inbound().bytes_buffered());
        } else if (what < 254) {
          conn.shutdown_write(now);
        } else {
          conn.abort(now);
        }
        conn.tick(now);
        break;
      }
      case 3: {
        const uint8_t what = in.u8();
        if (what & 1) {
          conn.orphan(now);
        } else {
          const uint32_t mtu = in.u16();
          const Wrap32 quoted = conn.sender().oldest_unacked() + static_cast<uint32_t>(in.u16());
          static_cast<void>(conn.on_path_mtu(mtu, quoted, now));
        }
        static_cast<void>(conn.time_wait());
        break;
      }
      default:
        if (const auto t = conn.next_deadline()) {
          now = std::max(now, *t);
          // Something may be due again at once (a zero probe timeout), but
          // ticks at one instant must run out.
          size_t ticks = 0;
          for (auto due = t; due && *due <= now; due = conn.next_deadline()) {
            TINYTCP_CHECK(++ticks <= 16);
            conn.tick(now);
          }
        }
        break;
    }
    TINYTCP_CHECK(conn.inbound().bytes_buffered() <= conn.inbound().capacity());
    TINYTCP_CHECK(conn.outbound().bytes_buffered() <= conn.outbound().capacity());
    TINYTCP_CHECK(std::string(to_string(conn.state())) != "unknown");
  }
  return 0;
}

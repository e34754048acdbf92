// Drives a whole stack::Host on a virtual clock with a little program decoded
// from the input: datagrams from peers, time passing (by a fuzzed amount, or
// straight to next_deadline(), so every timer fires: RTO, SYN and SYN-ACK
// retries, persist, keepalive, delayed ACK, FIN-WAIT-2, TIME-WAIT, fragment
// reassembly timeouts), and the socket API (listen, accept, connect, write,
// peek/consume/read, shutdown_write, close, abort).
//
// To get past the checksums and the sequence checks, most datagrams are
// valid IPv4+TCP built from fuzzed fields on a small set of addresses and
// ports (the Host's own, its listeners', its connections'), with sequence
// and acknowledgment numbers near those the Host last sent: every datagram
// the Host sends is parsed (FlowTable) to learn them. Others are raw bytes,
// fragments of a valid datagram, ICMP errors quoting a segment the Host sent,
// datagrams of other protocols (UDP), or a valid datagram with a byte flipped.
//
// Checks besides the sanitizers: every datagram the Host sends parses, its
// checksums are right and it fits the MTU the MSS implies; the socket count
// and the TIME-WAIT table stay within their configured bounds; a socket's
// buffered bytes stay within its buffers; ticking at next_deadline() moves
// the deadline forward within a few ticks (no timer that fires forever at
// one instant).

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_host_packets.hh"
#include "stack/host.hh"
#include "util/buffer.hh"
#include "util/check.hh"
#include "wire/icmp.hh"
#include "wire/ipv4.hh"
#include "wire/tcp_header.hh"

namespace {

using namespace tinytcp;
using namespace tinytcp::fuzz;
using stack::FourTuple;
using stack::SocketId;

const wire::Ipv4Address kLocal = wire::Ipv4Address::from_octets(10, 0, 0, 1);
const std::array<wire::Ipv4Address, 3> kRemotes = {wire::Ipv4Address::from_octets(10, 0, 0, 2),
                                                   wire::Ipv4Address::from_octets(10, 0, 0, 3),
                                                   wire::Ipv4Address::from_octets(192, 0, 2, 9)};
const wire::Ipv4Address kRouter = wire::Ipv4Address::from_octets(10, 0, 0, 254);
constexpr std::array<uint16_t, 3> kLocalPorts = {80, 443, 7};
constexpr std::array<uint16_t, 3> kRemotePorts = {40000, 40001, 80};
constexpr size_t kMaxIds = 16;
constexpr size_t kMaxOutputsPerStep = 20000;  // a loop, not a burst
constexpr size_t kMaxTicksAtOneInstant = 16;

// A payload whose bytes say where they came from, so corruption would show.
const std::string kPayload = [] {
  std::string s(4096, '\0');
  for (size_t i = 0; i < s.size(); ++i) {
    s[i] = static_cast<char>('a' + i % 26);
  }
  return s;
}();

class HostFuzzer {
 public:
  explicit HostFuzzer(BufferReader& in)
      : in_(in), host_(make_config(in), [this](std::string_view d) { on_output(d); }) {}

  void run() {
    while (in_.ok() && in_.remaining() > 0) {
      outputs_in_step_ = 0;
      step(in_.u8());
      check_bounds();
    }
  }

 private:
  static stack::HostConfig make_config(BufferReader& in) {
    stack::HostConfig c;
    c.address = kLocal;
    c.secret = "fuzz-host-secret-0123456789";
    const uint8_t a = in.u8();
    const uint8_t b = in.u8();
    c.tcp.mss = static_cast<uint16_t>(64 + (a % 8) * 200);  // 64..1464
    c.tcp.window_scale = (b & 1) != 0;
    c.tcp.sack = (b & 2) != 0;
    c.tcp.timestamps = (b & 4) != 0;
    c.tcp.delayed_ack = (b & 8) != 0;
    c.tcp.nagle = (b & 16) != 0;
    c.tcp.keepalive = (b & 32) != 0;
    c.syn_cookies = (b & 64) != 0;
    c.tcp.rack = (b & 128) != 0;
    c.tcp.receive_buffer_bytes = 512u << (a >> 6);  // 512..4096
    c.tcp.send_buffer_bytes = 1024u << ((a >> 3) % 4);
    static const char* const kCongestion[] = {"reno", "newreno", "cubic", "bbr"};
    c.tcp.congestion_control = kCongestion[(a >> 5) % 4];
    c.tcp.keepalive_idle = std::chrono::seconds(5);
    c.tcp.keepalive_interval = std::chrono::seconds(1);
    c.tcp.keepalive_probes = 3;
    c.tcp.msl = std::chrono::seconds(2);
    c.tcp.fin_wait2_timeout = std::chrono::seconds(10);
    c.tcp.max_retransmissions = 6;
    c.max_sockets = 6;
    c.max_time_wait = 3;
    c.default_backlog = 2;
    c.reassembly.max_datagrams = 3;
    c.reassembly.max_fragments = 6;
    c.reassembly.max_bytes = 6000;
    c.reassembly.timeout = std::chrono::seconds(3);
    return c;
  }

  // Every datagram the Host sends: well formed, within the MTU, learnt from.
  void on_output(std::string_view d) {
    TINYTCP_CHECK(++outputs_in_step_ <= kMaxOutputsPerStep);
    const auto ip = wire::parse_ipv4(d);
    TINYTCP_CHECK(ip.has_value());
    TINYTCP_CHECK(ip->header.src == kLocal);
    TINYTCP_CHECK(!ip->header.is_fragment());
    if (ip->header.protocol == wire::TcpHeader::kProtocol) {
      // The MSS we announce is the MTU less 40: options come out of the payload.
      TINYTCP_CHECK(d.size() <= size_t{host_.config().tcp.mss} + 40);
      const auto tcp = wire::parse_tcp(ip->payload, ip->header.src.value, ip->header.dst.value);
      TINYTCP_CHECK(tcp.has_value());
      TINYTCP_CHECK(!(tcp->header.rst && !tcp->payload.empty()));
      flows_.observe(ip->header, *tcp, d);
    } else {
      TINYTCP_CHECK(ip->header.protocol == 1);
      const auto icmp = wire::parse_icmp(ip->payload);
      TINYTCP_CHECK(icmp.has_value());
      if (icmp->is_error()) {
        TINYTCP_CHECK(d.size() <= net::IcmpResponder::kMaxErrorDatagram);
      }
    }
  }

  void check_bounds() {
    const auto& c = host_.config();
    TINYTCP_CHECK(host_.socket_count() <= c.max_sockets);
    TINYTCP_CHECK(host_.time_wait_count() <= c.max_time_wait);
    for (const SocketId id : ids_) {
      if (const auto info = host_.info(id)) {
        TINYTCP_CHECK(info->readable_bytes <= c.tcp.receive_buffer_bytes);
        TINYTCP_CHECK(info->writable_bytes <= c.tcp.send_buffer_bytes);
      }
    }
  }

  void step(uint8_t op) {
    switch (op % 12) {
      case 0:
      case 1:
      case 2:
        return deliver(segment_on_flow());
      case 3:
        return deliver(syn_to_listener());
      case 4:
        return advance(std::chrono::milliseconds(in_.u16()) * (1 + in_.u8() % 16));
      case 5:
        return advance_to_deadline();
      case 6:
      case 7:
        return socket_call(in_.u8());
      case 8:
        return other_datagram(in_.u8());
      case 9:
        return fragments();
      case 10:
        return icmp();
      default: {  // a valid datagram with one byte changed
        std::string d = segment_on_flow();
        if (!d.empty()) {
          d[in_.u16() % d.size()] ^= static_cast<char>(in_.u8() | 1);
        }
        return deliver(d);
      }
    }
  }

  // Raw bytes, or a valid datagram of another protocol than TCP and ICMP
  // (UDP: port unreachable; others: protocol unreachable), rate limited.
  void other_datagram(uint8_t kind) {
    if (kind >= 64) {
      return deliver(std::string(in_.bytes(std::min<size_t>(in_.u8(), in_.remaining()))));
    }
    const uint8_t protocol = (kind & 1) ? 17 : static_cast<uint8_t>(kind + 2);
    wire::Ipv4Header h = ipv4_header(kRemotes[kind % 3], kLocal, protocol);
    h.ttl = in_.u8();
    deliver(ipv4_datagram(h, std::string_view(kPayload).substr(0, size_t{in_.u8()} * 4)));
  }

  void deliver(std::string_view datagram) {
    if (!datagram.empty()) {
      host_.receive_datagram(datagram, now_);
    }
  }

  void advance(Duration by) {
    now_ += by;
    host_.tick(now_);
  }

  void advance_to_deadline() {
    const auto deadline = host_.next_deadline();
    if (!deadline) {
      return;
    }
    now_ = std::max(now_, *deadline);
    // A tick may leave something due at once (a probe whose timeout was
    // zero, an ACK the tick made due), so an event loop ticks again; but
    // ticks at one instant must run out, or the loop spins forever.
    for (size_t ticks = 0;; ++ticks) {
      host_.tick(now_);
      const auto after = host_.next_deadline();
      if (!after || *after > now_) {
        return;
      }
      if (ticks == kMaxTicksAtOneInstant) {
        report_due_timers();
      }
      TINYTCP_CHECK(ticks < kMaxTicksAtOneInstant);
    }
  }

  // What is still due after the tick at its deadline (printed on failure).
  void report_due_timers() const {
    const auto ms = [this](std::optional<Instant> t) {
      return t ? std::to_string((*t - now_) / std::chrono::microseconds(1)) : std::string("-");
    };
    std::fprintf(stderr, "fuzz_host: a deadline stays due after %zu ticks (us from now)\n",
                 kMaxTicksAtOneInstant);
    for (const SocketId id : ids_) {
      if (const auto* c = host_.connection(id)) {
        std::fprintf(stderr, "  socket %u %s: connection %s sender %s receiver %s ack_due_now %d\n",
                     id, tcp::to_string(c->state()), ms(c->next_deadline()).c_str(),
                     ms(c->sender().next_deadline()).c_str(),
                     ms(c->receiver().next_deadline()).c_str(), c->receiver().ack_due_now());
      }
    }
  }

  // A segment to the Host on a flow it has talked on (or a made-up one),
  // numbers near the Host's own.
  std::string segment_on_flow() {
    const uint8_t pick = in_.u8();
    const uint8_t flags = in_.u8();
    const uint8_t shape = in_.u8();
    FourTuple tuple{kLocal, kLocalPorts[pick % 3], kRemotes[(pick >> 2) % 3],
                    kRemotePorts[(pick >> 4) % 3]};
    Flow* flow = nullptr;
    if (flows_.size() > 0 && (pick & 0xc0) != 0xc0) {
      flow = &flows_.at(pick);
      tuple = flow->tuple;
    }
    wire::TcpHeader h;
    h.src_port = tuple.remote_port;
    h.dst_port = tuple.local_port;
    h.ack = (flags & 1) == 0;
    h.fin = (flags & 2) != 0;
    h.rst = (flags & 4) != 0 && (flags & 8) != 0;
    h.syn = (flags & 0x30) == 0x30 && !h.fin;
    h.psh = (flags & 0x40) != 0;
    h.urg = (flags & 0x80) != 0 && (shape & 0x80) != 0;
    h.ece = (shape & 0x40) != 0 && (shape & 0x80) != 0;
    h.window = (shape & 0x20) ? in_.u16() : static_cast<uint16_t>(0xffff >> (shape & 7));
    h.urgent_pointer = h.urg ? in_.u16() : 0;
    const uint32_t peer_next = flow ? flow->peer_next : in_.u32();
    const uint32_t host_next = flow ? flow->host_next : in_.u32();
    h.seqno = peer_next + near(shape >> 3 & 3);
    h.ackno = host_next - near(shape >> 1 & 3);
    const uint8_t opts = in_.u8();
    if (h.syn) {
      if (opts & 1)
        h.mss = static_cast<uint16_t>(in_.u16() % 1600);
      if (opts & 2)
        h.window_scale = static_cast<uint8_t>(in_.u8() % 16);
      h.sack_permitted = (opts & 4) != 0;
    }
    if (opts & 8) {
      ts_clock_ += in_.u8();
      h.timestamps = wire::TcpTimestampOption{(opts & 16) ? in_.u32() : ts_clock_,
                                              flow ? flow->host_tsval - (opts >> 7) : 0};
    }
    h.sack_count = static_cast<uint8_t>((opts >> 5) & 3);
    for (size_t i = 0; i < h.sack_count; ++i) {
      const uint32_t left = host_next - in_.u16();
      h.sack[i] = {left, left + in_.u16() % 4096};
    }
    const size_t length = std::min<size_t>(size_t{in_.u8()} * 8, kPayload.size());
    const std::string_view payload = std::string_view(kPayload).substr(in_.u8(), length);
    if (flow && h.seqno == flow->peer_next && !h.rst) {
      flow->peer_next += static_cast<uint32_t>(payload.size()) + (h.syn ? 1 : 0) + (h.fin ? 1 : 0);
    }
    return tcp_datagram(tuple, h, payload);
  }

  // An offset from a number the Host sent: mostly none, sometimes a little
  // either way, sometimes anywhere.
  uint32_t near(unsigned how) {
    switch (how) {
      case 0:
        return 0;
      case 1:
        return static_cast<uint32_t>(static_cast<int8_t>(in_.u8()));
      case 2:
        return static_cast<uint32_t>(static_cast<int16_t>(in_.u16())) * 8;
      default:
        return in_.u32();
    }
  }

  // A peer opening a connection to a port of ours (a listener's or not).
  std::string syn_to_listener() {
    const uint8_t pick = in_.u8();
    const uint8_t opts = in_.u8();
    const FourTuple tuple{kLocal, kLocalPorts[pick % 3], kRemotes[(pick >> 2) % 3],
                          static_cast<uint16_t>(kRemotePorts[(pick >> 4) % 3] + (pick >> 6))};
    wire::TcpHeader h;
    h.src_port = tuple.remote_port;
    h.dst_port = tuple.local_port;
    h.syn = true;
    h.seqno = in_.u32();
    h.window = in_.u16();
    h.ece = h.cwr = (opts & 64) != 0;
    if (opts & 1)
      h.mss = static_cast<uint16_t>(in_.u16() % 1600);
    if (opts & 2)
      h.window_scale = static_cast<uint8_t>(opts >> 4 | (opts & 128) >> 4);
    h.sack_permitted = (opts & 4) != 0;
    if (opts & 8) {
      ts_clock_ += 1000;
      h.timestamps = wire::TcpTimestampOption{ts_clock_, 0};
    }
    flows_.open(tuple, h.seqno);
    return tcp_datagram(tuple, h, std::string_view(kPayload).substr(0, (opts & 32) ? 100 : 0));
  }

  void socket_call(uint8_t what) {
    const SocketId id = ids_.empty() ? SocketId{in_.u8()} : ids_[in_.u8() % ids_.size()];
    switch (what % 12) {
      case 0: {
        const auto r = host_.listen(kLocalPorts[in_.u8() % 3], in_.u8() % 4);
        if (r)
          remember(*r);
        return;
      }
      case 1: {
        const uint8_t to = in_.u8();
        const auto r = host_.connect(kRemotes[to % 3], kRemotePorts[(to >> 2) % 3], now_);
        if (r)
          remember(*r);
        return;
      }
      case 2:
        while (const auto accepted = host_.accept(id)) {
          remember(*accepted);
        }
        return;
      case 3:
      case 4:
        host_.write(id, std::string_view(kPayload).substr(0, size_t{in_.u8()} * 16), now_);
        return;
      case 5: {
        const std::string_view view = host_.peek(id);
        host_.consume(id, std::min<size_t>(view.size(), in_.u16()), now_);
        return;
      }
      case 6: {
        std::array<char, 1500> buf;
        host_.read(id, buf.data(), in_.u16() % buf.size(), now_);
        return;
      }
      case 7:
        host_.shutdown_write(id, now_);
        return;
      case 8:
        host_.close(id, now_);
        return;
      case 9:
        host_.abort(id, now_);
        return;
      case 10:
        static_cast<void>(host_.info(id));
        static_cast<void>(host_.connection(id));
        return;
      default:
        host_.expect_cookies(id, now_);
        return;
    }
  }

  void remember(SocketId id) {
    if (ids_.size() < kMaxIds) {
      ids_.push_back(id);
    } else {
      ids_[id % kMaxIds] = id;
    }
  }

  // A valid datagram (TCP on a flow, or a ping) cut into fragments, some
  // left out, repeated or overlapping, in an order of the input's choosing.
  void fragments() {
    const uint8_t how = in_.u8();
    std::string whole;
    if (how & 1) {
      whole = segment_on_flow();
    } else {
      const std::string_view data = std::string_view(kPayload).substr(0, size_t{in_.u8()} * 16);
      whole = icmp_datagram(kRemotes[how >> 1 & 1], kLocal,
                            wire::IcmpMessage::echo(wire::icmp::kEchoRequest, 1, in_.u16(), data));
    }
    const auto ip = wire::parse_ipv4(whole);
    if (!ip) {
      return;
    }
    const size_t total = ip->payload.size();
    const size_t piece = 8 * (1 + in_.u8() % 64);
    const uint16_t id = in_.u16();
    std::vector<std::string> parts;
    for (size_t at = 0; at < total && parts.size() < 32; at += piece) {
      const size_t overlap = (how & 2) && at > 0 ? 8 : 0;
      parts.push_back(fragment_of(whole, at - overlap, piece + overlap, at + piece < total, id));
    }
    if (how & 4) {
      std::reverse(parts.begin(), parts.end());
    }
    const uint8_t skip = in_.u8();
    for (size_t i = 0; i < parts.size(); ++i) {
      if ((how & 8) && i == skip % parts.size()) {
        continue;
      }
      deliver(parts[i]);
      if (how & 16) {
        deliver(parts[i]);
      }
    }
  }

  // An ICMP error quoting a segment the Host sent (frag-needed with a fuzzed
  // MTU, other unreachables, time exceeded), maybe with the quoted sequence
  // number moved; or a ping.
  void icmp() {
    const uint8_t how = in_.u8();
    if (flows_.size() == 0 || (how & 7) == 7) {
      const std::string_view data = std::string_view(kPayload).substr(0, in_.u8());
      deliver(icmp_datagram(kRemotes[how >> 3 & 1], kLocal,
                            wire::IcmpMessage::echo(wire::icmp::kEchoRequest, 7, in_.u16(), data)));
      return;
    }
    Flow& flow = flows_.at(in_.u8());
    std::string quote = flow.last;
    if (quote.empty()) {
      return;
    }
    const size_t quoted = std::min(quote.size(), size_t{28} + (how >> 3 & 3) * 12);
    quote.resize(quoted);
    if ((how & 0x20) && quote.size() >= 28) {  // move the quoted sequence number
      const uint32_t delta = near(in_.u8() % 4);
      for (size_t i = 0; i < 4; ++i) {
        quote[24 + i] = static_cast<char>(quote[24 + i] + static_cast<char>(delta >> (8 * i)));
      }
    }
    wire::IcmpMessage m;
    static const std::array<std::pair<uint8_t, uint8_t>, 4> kKinds = {{
        {wire::icmp::kDestinationUnreachable, wire::icmp::kFragmentationNeeded},
        {wire::icmp::kDestinationUnreachable, wire::icmp::kPortUnreachable},
        {wire::icmp::kDestinationUnreachable, 1},
        {wire::icmp::kTimeExceeded, wire::icmp::kTtlExceeded},
    }};
    const auto kind = kKinds[(how >> 6) & 3];
    m.type = kind.first;
    m.code = (how & 3) == 3 ? in_.u8() : kind.second;
    m.rest = in_.u16();
    m.data = quote;
    deliver(icmp_datagram((how & 4) ? kRouter : flow.tuple.remote_ip.v4(), kLocal, m));
  }

  BufferReader& in_;
  Instant now_;
  uint32_t ts_clock_ = 1;
  FlowTable flows_;
  std::vector<SocketId> ids_;
  size_t outputs_in_step_ = 0;
  stack::Host host_;  // last: its destructor may still send
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  BufferReader in(std::string_view(reinterpret_cast<const char*>(data), size));
  HostFuzzer fuzzer(in);
  fuzzer.run();
  return 0;
}

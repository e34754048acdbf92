// The SYN-cookie path of one Host in memory, the work tt-serve does per SYN
// of a flood without the syscalls: a listener whose SYN queue is full (a
// backlog of 1, filled by the first SYN) answers each further SYN with a
// cookie SYN-ACK. The SYNs are Linux-like (MSS, SACK-permitted, timestamps,
// window scale) from random addresses in 10.77.0.0/16 and random ports,
// serialized once up front (a ring of 4,096), as benchmark/syn_flood.cc writes
// them into tun145. items_per_second is SYNs answered a second on one core;
// the counter syn_acks must equal the SYNs. For a stable figure, count
// instructions per SYN:
//
//   valgrind --tool=callgrind build/release/bin/tinytcp_bench
//       --benchmark_filter=bm_host_syn_cookie --benchmark_min_time=0.2
//
// and divide Host::receive_datagram's inclusive cost by its calls.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "stack/datagram_codec.hh"
#include "stack/host.hh"
#include "util/buffer.hh"
#include "util/random.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

const wire::Ipv4Address kServer = wire::Ipv4Address::from_octets(169, 254, 145, 9);

std::vector<std::string> make_syns(size_t count) {
  Rng rng(15);
  std::vector<std::string> syns;
  syns.reserve(count);
  std::string buf(120, '\0');
  for (size_t i = 0; i < count; ++i) {
    tcp::TcpSegment syn;
    syn.syn = true;
    syn.seqno = tcp::Wrap32{static_cast<uint32_t>(rng.next())};
    syn.window = 64240;
    syn.options.mss = 1460;
    syn.options.sack_permitted = true;
    syn.options.window_scale = 7;
    syn.options.timestamps = tcp::Timestamps{static_cast<uint32_t>(rng.next()), 0};
    const auto source = wire::Ipv4Address::from_octets(
        10, 77, static_cast<uint8_t>(rng.next() & 0xff), static_cast<uint8_t>(rng.next() & 0xff));
    const FourTuple tuple{IpAddress(kServer), 7, IpAddress(source),
                          static_cast<uint16_t>(1024 + rng.next() % 60000)};
    BufferWriter w(buf.data(), buf.size());
    if (serialize_datagram(syn, tuple.reversed(), 64, w)) {
      syns.emplace_back(w.written());
    }
  }
  return syns;
}

void bm_host_syn_cookie(benchmark::State& state) {
  HostConfig config;
  config.address = kServer;
  config.secret = "bm_host_syn_cookie-secret-012345";
  uint64_t syn_acks = 0;
  Host host(config, [&syn_acks](std::string_view) { ++syn_acks; });
  const SocketId listener = *host.listen(7, 1);
  static_cast<void>(listener);
  const std::vector<std::string> syns = make_syns(4096);
  Instant now;
  host.receive_datagram(syns[0], now);  // fills the SYN queue of one
  const uint64_t before = syn_acks;
  size_t i = 1;
  uint64_t answered = 0;
  for (auto _ : state) {
    host.receive_datagram(syns[i], now);
    i = i + 1 == syns.size() ? 1 : i + 1;
    now += 3us;
    ++answered;
  }
  state.SetItemsProcessed(static_cast<int64_t>(answered));
  state.counters["syn_acks"] = static_cast<double>(syn_acks - before);
  state.counters["cookies"] = static_cast<double>(host.stats().syn_cookies_sent);
}
BENCHMARK(bm_host_syn_cookie);

}  // namespace
}  // namespace tinytcp::stack

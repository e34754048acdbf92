// Speed of io/: the UDP tunnel over loopback (what two tinytcp processes get
// between them without privileges) and the impairment model's per-packet cost.
//
// UdpTunnel/loopback/<size>: one thread sends batches of 64 datagrams through
// one tunnel (sendmmsg, UDP GSO) and reads them from the other (recvmmsg, UDP
// GRO); bytes per second counts datagrams that arrived, and `lost` those the
// kernel dropped. loopback_no_offload: the same, one datagram per message.

#include <poll.h>

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "io/impairment.hh"
#include "io/udp_tunnel.hh"
#include "util/random.hh"

using namespace std::chrono_literals;

namespace tinytcp::io {
namespace {

void bm_udp_tunnel_loopback(benchmark::State& state, bool offload) {
  const auto size = static_cast<size_t>(state.range(0));
  constexpr size_t kBatch = 64;
  UdpTunnelConfig config;
  config.local = UdpEndpoint{0x7f000001, 0};
  config.mtu = std::max<size_t>(1500, size);
  config.segmentation_offload = offload;
  UdpTunnel a(config);
  UdpTunnel b(config);
  a.connect(b.local_endpoint());
  b.connect(a.local_endpoint());
  const std::string payload = Rng(1).bytes(size);
  const std::vector<std::string_view> batch(kBatch, payload);
  uint64_t received_bytes = 0;
  const PacketHandler count = [&](std::string_view p) { received_bytes += p.size(); };
  for (auto _ : state) {
    const uint64_t drops_before = a.stats().send_drops;
    a.send_batch(batch.data(), batch.size());
    const uint64_t expected =
        b.stats().packets_received + kBatch - (a.stats().send_drops - drops_before);
    // Read until this batch is in, or nothing more comes (lost in the kernel).
    while (b.stats().packets_received < expected) {
      if (b.receive_batch(count, kBatch) == 0) {
        pollfd p{b.fd(), POLLIN, 0};
        if (::poll(&p, 1, 10) != 1) {
          break;
        }
      }
    }
  }
  if (received_bytes == 0) {
    state.SkipWithError("no datagram arrived");
    return;
  }
  state.SetBytesProcessed(static_cast<int64_t>(received_bytes));
  const auto sent = static_cast<double>(kBatch) * static_cast<double>(state.iterations());
  state.counters["lost"] = 1.0 - static_cast<double>(b.stats().packets_received) / sent;
}
BENCHMARK_CAPTURE(bm_udp_tunnel_loopback, gso, true)
    ->Name("UdpTunnel/loopback")
    ->Arg(1400)
    ->Arg(8900);
BENCHMARK_CAPTURE(bm_udp_tunnel_loopback, plain, false)
    ->Name("UdpTunnel/loopback_no_offload")
    ->Arg(1400)
    ->Arg(8900);

// 1400-byte packets through delay 1 ms with 200 us jitter and 1% loss, one
// packet pushed every 10 us of manual time, released as they fall due.
void bm_impairment_delay_jitter(benchmark::State& state) {
  ImpairmentConfig config;
  config.delay = 1ms;
  config.jitter = 200us;
  config.loss = 0.01;
  ImpairmentModel model(config, 7);
  const std::string packet = Rng(2).bytes(1400);
  Instant now;
  uint64_t out = 0;
  const PacketHandler sink = [&](std::string_view p) {
    out += p.size();
    benchmark::DoNotOptimize(p.data());
  };
  for (auto _ : state) {
    model.push(packet, now);
    now += 10us;
    model.release(now, sink);
  }
  if (out == 0 && state.iterations() > 200) {
    state.SkipWithError("nothing released");
    return;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(out));
}
BENCHMARK(bm_impairment_delay_jitter)->Name("Impairment/delay_jitter_loss");

}  // namespace
}  // namespace tinytcp::io

// Speed of the TCP sender alone: the app writes into the send buffer, the
// sender segments it (payload views into the ring), and an ideal peer
// acknowledges every second segment at once (no loss, no delay). Reports
// bytes_per_second of payload acknowledged; everything else a connection does
// (receiver, codec) is measured elsewhere.

#include <benchmark/benchmark.h>

#include <string>

#include "tcp/tcp_sender.hh"
#include "util/random.hh"

namespace tinytcp::tcp {
namespace {

void bm_tcp_sender_transfer(benchmark::State& state) {
  const auto mss = static_cast<uint16_t>(state.range(0));
  constexpr uint64_t kTotal = 64 << 20;  // per iteration
  TcpConfig config;
  config.mss = mss;
  config.send_buffer_bytes = 4 << 20;
  config.timestamps = false;
  config.congestion_control = "cubic";
  const std::string chunk = Rng(1).bytes(256 << 10);
  const Wrap32 isn{12345};
  Instant now;
  uint64_t acked_total = 0;
  uint64_t checksum = 0;

  for (auto _ : state) {
    state.PauseTiming();
    TcpSender sender(config, isn);
    Wrap32 last_end = isn;
    uint32_t unacked_segments = 0;
    auto transmit = [&](const TcpSegment& seg) {
      checksum += seg.payload.empty()
                      ? 0u
                      : static_cast<uint64_t>(static_cast<unsigned char>(seg.payload.back()));
      last_end = seg.seqno + static_cast<uint32_t>(seg.sequence_length());
      ++unacked_segments;
    };
    sender.push(now, transmit);
    PeerOptions peer;
    peer.mss = mss;
    peer.send_window_shift = 7;  // 8 MiB window
    sender.set_peer_options(peer);
    TcpSegment ack;
    ack.ack = true;
    ack.syn = true;
    ack.ackno = isn + 1;
    ack.window = 65535;
    sender.receive(ack, now);
    ack.syn = false;
    state.ResumeTiming();

    uint64_t written = 0;
    while (sender.outbound().bytes_popped() < kTotal) {
      while (written < kTotal && sender.outbound().available_capacity() > 0) {
        written += sender.outbound().push(std::string_view(chunk).substr(
            0, static_cast<size_t>(std::min<uint64_t>(chunk.size(), kTotal - written))));
      }
      unacked_segments = 0;
      sender.push(now, transmit);
      if (unacked_segments == 0 && sender.sequence_numbers_in_flight() == 0) {
        break;
      }
      // The peer acknowledges everything sent, one ACK per two segments'
      // worth (the last ACK covers all).
      const Wrap32 una = sender.oldest_unacked();
      const uint32_t span = static_cast<uint32_t>(last_end - una);
      const uint32_t step = 2u * sender.max_payload();
      for (uint32_t off = step; off < span; off += step) {
        ack.ackno = una + off;
        sender.receive(ack, now);
      }
      ack.ackno = last_end;
      sender.receive(ack, now);
      now += std::chrono::microseconds(10);
    }
    acked_total += sender.outbound().bytes_popped();
    if (sender.outbound().bytes_popped() != kTotal) {
      state.SkipWithError("sender did not deliver every byte");
      break;
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetBytesProcessed(static_cast<int64_t>(acked_total));
}

BENCHMARK(bm_tcp_sender_transfer)->Name("TcpSender/transfer")->Arg(1460)->Arg(65535);

}  // namespace
}  // namespace tinytcp::tcp

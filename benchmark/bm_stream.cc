// Speed of the bottom of the stack: ByteStream and Reassembler.
//
// Every benchmark reports bytes_per_second of honest stream bytes (each unique
// byte counted once). The classic Reassembler test also reports the figure the
// published speed test prints (chunks x capacity x 8 bits / time) as the user
// counter `classic_gbps`, so the two can never be confused.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "stream/byte_stream.hh"
#include "stream/reassembler.hh"
#include "util/random.hh"

namespace tinytcp::stream {
namespace {

constexpr uint64_t kCapacity = 32768;
constexpr uint64_t kSegment = 1500;

// 10^7 bytes through a 32768-byte stream in 1500-byte pushes, popped
// `pop_size` bytes at a time.
void bm_byte_stream_pop(benchmark::State& state, uint64_t pop_size) {
  constexpr uint64_t kTotal = 10'000'000;
  const std::string chunk = Rng(1).bytes(kSegment);
  ByteStream stream(kCapacity);
  for (auto _ : state) {
    uint64_t pushed = 0;
    while (pushed < kTotal) {
      while (pushed < kTotal && stream.available_capacity() > 0) {
        pushed +=
            stream.push(std::string_view(chunk).substr(0, std::min(kSegment, kTotal - pushed)));
      }
      while (stream.bytes_buffered() > 0) {
        const auto view = stream.peek();
        benchmark::DoNotOptimize(view.data());
        stream.pop(std::min<uint64_t>(pop_size, view.size()));
      }
    }
  }
  if (stream.bytes_popped() != kTotal * static_cast<uint64_t>(state.iterations())) {
    state.SkipWithError("ByteStream lost bytes");
  }
  state.SetBytesProcessed(static_cast<int64_t>(kTotal) * state.iterations());
}

struct Segment {
  uint64_t index;
  std::string_view data;
  bool last;
};

// Runs one pass of `segments` through a fresh Reassembler, draining after
// every insert; returns the bytes assembled.
uint64_t run_reassembler(const std::vector<Segment>& segments, uint64_t capacity) {
  ByteStream stream(capacity);
  Reassembler reassembler(stream);
  for (const auto& seg : segments) {
    reassembler.insert(seg.index, seg.data, seg.last);
    while (stream.bytes_buffered() > 0) {
      const auto view = stream.peek();
      benchmark::DoNotOptimize(view.data());
      stream.pop(view.size());
    }
  }
  return stream.bytes_pushed();
}

void report(benchmark::State& state, uint64_t got, uint64_t want) {
  if (got != want) {
    state.SkipWithError("Reassembler did not assemble the whole stream");
  }
  state.SetBytesProcessed(static_cast<int64_t>(want) * state.iterations());
}

// The classic published speed test: a 1000 x 1500-byte stream, capacity
// 32768. For each window end (stepping by the capacity) 1500-byte segments are
// inserted walking backwards to index 0 with the given step.
void bm_reassembler_classic(benchmark::State& state, uint64_t step) {
  constexpr uint64_t kChunks = 1000;
  const std::string data = Rng(2).bytes(kChunks * kSegment);
  const uint64_t length = data.size();
  std::vector<Segment> segments;
  for (uint64_t window_end = kCapacity;; window_end += kCapacity) {
    const uint64_t end = std::min(window_end, length);
    for (uint64_t start = ((end - 1) / step) * step;; start -= step) {
      const uint64_t len = std::min(kSegment, length - start);
      segments.push_back({start, std::string_view(data).substr(start, len), start + len == length});
      if (start == 0) {
        break;
      }
    }
    if (end == length) {
      break;
    }
  }
  uint64_t got = 0;
  for (auto _ : state) {
    got = run_reassembler(segments, kCapacity);
  }
  report(state, got, length);
  state.counters["classic_gbps"] = benchmark::Counter(
      static_cast<double>(kChunks * kCapacity * 8) / 1e9 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  state.counters["inserts"] = static_cast<double>(segments.size());
}

// Honest workloads over a 10 MB stream: segments of 1500 bytes whose starts
// step by `step` within each capacity-sized window, in the order `order` makes.
enum class Order { InOrder, Reversed, Random };

void bm_reassembler_honest(benchmark::State& state, Order order, uint64_t step) {
  constexpr uint64_t kLength = 10'000'000;
  const std::string data = Rng(3).bytes(kLength);
  Rng rng(4);
  std::vector<Segment> segments;
  for (uint64_t window = 0; window < kLength; window += kCapacity) {
    const uint64_t window_end = std::min(window + kCapacity, kLength);
    std::vector<Segment> in_window;
    for (uint64_t start = window; start < window_end; start += step) {
      const uint64_t len = std::min(kSegment, window_end - start);
      in_window.push_back(
          {start, std::string_view(data).substr(start, len), start + len == kLength});
    }
    if (order == Order::Reversed) {
      std::reverse(in_window.begin(), in_window.end());
    } else if (order == Order::Random) {
      std::shuffle(in_window.begin(), in_window.end(), rng.engine());
    }
    segments.insert(segments.end(), in_window.begin(), in_window.end());
  }
  uint64_t got = 0;
  for (auto _ : state) {
    got = run_reassembler(segments, kCapacity);
  }
  report(state, got, kLength);
}

BENCHMARK_CAPTURE(bm_byte_stream_pop, 4096, 4096)->Name("ByteStream/pop:4096");
BENCHMARK_CAPTURE(bm_byte_stream_pop, 128, 128)->Name("ByteStream/pop:128");
BENCHMARK_CAPTURE(bm_byte_stream_pop, 32, 32)->Name("ByteStream/pop:32");
BENCHMARK_CAPTURE(bm_reassembler_classic, no_overlap, kSegment)
    ->Name("Reassembler/classic/no_overlap");
BENCHMARK_CAPTURE(bm_reassembler_classic, overlap10x, kSegment / 10)
    ->Name("Reassembler/classic/overlap10x");
BENCHMARK_CAPTURE(bm_reassembler_honest, in_order, Order::InOrder, kSegment)
    ->Name("Reassembler/in_order");
BENCHMARK_CAPTURE(bm_reassembler_honest, reversed, Order::Reversed, kSegment)
    ->Name("Reassembler/reversed");
BENCHMARK_CAPTURE(bm_reassembler_honest, random2x, Order::Random, kSegment / 2)
    ->Name("Reassembler/random/overlap2x");
BENCHMARK_CAPTURE(bm_reassembler_honest, random10x, Order::Random, kSegment / 10)
    ->Name("Reassembler/random/overlap10x");

}  // namespace
}  // namespace tinytcp::stream

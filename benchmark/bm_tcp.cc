// Speed of a whole TCP connection: an in-memory transfer between two
// TcpConnections (handshake, data, ACKs, teardown). A's segments go straight
// into B's receive() from A's transmit callback (a perfect link of zero
// delay, optionally dropping data segments); B's answers wait in a queue that
// copies them, so A is never re-entered. Payload bytes are copied twice, as
// by a kernel over loopback: into A's send buffer and into B's receive
// buffer. Reports bytes_per_second of application payload delivered,
// verified byte for byte, per second of wall time.

#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tcp/tcp_connection.hh"
#include "util/random.hh"

namespace tinytcp::tcp {
namespace {

// One direction of the in-memory link: segments with their payload copied.
class Queue {
 public:
  void push(const TcpSegment& s) {
    if (count_ == packets_.size()) {
      packets_.emplace_back();
    }
    Packet& p = packets_[count_++];
    p.segment = s;
    p.payload.assign(s.payload.data(), s.payload.size());
  }
  // Hands every queued segment to `f`; segments queued meanwhile wait.
  template <typename F>
  void drain(F&& f) {
    std::swap(packets_, delivering_);
    const size_t n = count_;
    count_ = 0;
    for (size_t i = 0; i < n; ++i) {
      Packet& p = delivering_[i];
      p.segment.payload = p.payload;
      f(p.segment);
    }
  }
  bool empty() const { return count_ == 0; }

 private:
  struct Packet {
    TcpSegment segment;
    std::string payload;
  };
  std::vector<Packet> packets_;
  std::vector<Packet> delivering_;
  size_t count_ = 0;
};

struct TransferResult {
  uint64_t delivered = 0;
  bool intact = true;
  bool closed = false;
};

TransferResult transfer(uint16_t mss, double loss, uint64_t total, const std::string& source,
                        uint64_t seed, const char* cc) {
  TcpConfig config;
  config.mss = mss;
  config.congestion_control = cc;
  Rng rng(seed);
  Queue ba;
  Instant now;
  std::unique_ptr<TcpConnection> b;
  TcpConnection a(config, Wrap32{static_cast<uint32_t>(rng.next())}, [&](const TcpSegment& s) {
    if (loss > 0 && !s.payload.empty() && rng.chance(loss)) {
      return;
    }
    b->receive(s, now);
  });
  b = std::make_unique<TcpConnection>(config, Wrap32{static_cast<uint32_t>(rng.next())},
                                      [&](const TcpSegment& s) { ba.push(s); });
  b->listen();
  a.connect(now);

  TransferResult r;
  uint64_t written = 0;
  bool shut = false;
  const uint64_t n = source.size();
  for (int idle = 0; idle < 1000;) {
    // A's application writes.
    while (written < total && a.outbound().available_capacity() > 0) {
      const uint64_t offset = written % n;
      const uint64_t len = std::min(total - written, n - offset);
      const uint64_t pushed = a.outbound().push(std::string_view(source).substr(offset, len));
      written += pushed;
      if (pushed == 0) {
        break;
      }
    }
    if (written == total && !shut && a.state() == TcpState::Established) {
      a.shutdown_write(now);
      shut = true;
    }
    a.tick(now);
    // B's application reads and checks every byte.
    auto& in = b->inbound();
    while (in.bytes_buffered() > 0) {
      const std::string_view v = in.peek();
      size_t done = 0;
      while (done < v.size()) {
        const uint64_t offset = (r.delivered + done) % n;
        const size_t len = static_cast<size_t>(std::min<uint64_t>(v.size() - done, n - offset));
        r.intact = r.intact && std::memcmp(v.data() + done, source.data() + offset, len) == 0;
        done += len;
      }
      r.delivered += v.size();
      in.pop(v.size());
    }
    if (in.is_finished() && !b->closed() && b->state() == TcpState::CloseWait) {
      b->shutdown_write(now);
    }
    b->tick(now);
    ba.drain([&](const TcpSegment& s) { a.receive(s, now); });
    if (b->closed() && (a.closed() || a.state() == TcpState::TimeWait)) {
      r.closed = true;
      break;
    }
    if (ba.empty()) {
      // Nothing in flight: jump to the next timer (RTO, delayed ACK).
      std::optional<Instant> next = a.next_deadline();
      if (const auto t = b->next_deadline(); t && (!next || *t < *next)) {
        next = t;
      }
      if (!next) {
        ++idle;
        continue;
      }
      now = std::max(now + std::chrono::microseconds(1), *next);
    } else {
      now += std::chrono::microseconds(1);
    }
  }
  return r;
}

void bm_transfer_with(benchmark::State& state, uint16_t mss, double loss, const char* cc) {
  constexpr uint64_t kTotal = 64ull << 20;
  const std::string source = Rng(1).bytes(1 << 20);
  uint64_t seed = 1;
  uint64_t bytes = 0;
  for (auto _ : state) {
    const TransferResult r = transfer(mss, loss, kTotal, source, seed++, cc);
    if (r.delivered != kTotal || !r.intact || !r.closed) {
      state.SkipWithError("transfer incomplete or corrupted");
      return;
    }
    bytes += r.delivered;
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void bm_transfer(benchmark::State& state, uint16_t mss, double loss) {
  bm_transfer_with(state, mss, loss, "reno");
}

// The same transfer with bbr: delivery-rate sampling on every ACK and pacing
// (on this zero-delay link the pacing releases are the event loop's jumps).
void bm_transfer_bbr(benchmark::State& state, uint16_t mss, double loss) {
  bm_transfer_with(state, mss, loss, "bbr");
}

BENCHMARK_CAPTURE(bm_transfer, mss1460_loss0, 1460, 0.0)
    ->Name("Tcp/transfer/mss:1460/loss:0")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_transfer, mss65000_loss0, 65000, 0.0)
    ->Name("Tcp/transfer/mss:65000/loss:0")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_transfer, mss1460_loss1, 1460, 0.01)
    ->Name("Tcp/transfer/mss:1460/loss:1")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_transfer, mss1460_loss10, 1460, 0.10)
    ->Name("Tcp/transfer/mss:1460/loss:10")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_CAPTURE(bm_transfer_bbr, mss1460_loss0, 1460, 0.0)
    ->Name("Tcp/Bbr/transfer/mss:1460/loss:0")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(bm_transfer_bbr, mss1460_loss1, 1460, 0.01)
    ->Name("Tcp/Bbr/transfer/mss:1460/loss:1")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace tinytcp::tcp

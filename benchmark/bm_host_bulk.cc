// The per-segment cost of one bulk connection through two Hosts in memory,
// the work tt-serve does per packet on a plain TUN device without the
// syscalls: b writes (as an app does on Writable), a reads and discards, and
// every datagram goes through serialize, parse, checksum, demultiplexing,
// the sender, the receiver, timers and the socket events. The link is a
// queue of reused buffers with no delay; the manual clock advances 10 us per
// round. items_per_second is data segments a second on one core (its
// inverse is the ns per segment, sender and receiver together);
// bytes_per_second the payload. For a stable figure, count instructions:
//
//   valgrind --tool=callgrind build/release/bin/tinytcp_bench
//       --benchmark_filter=bm_host_bulk --benchmark_min_time=0.01
//
// and divide by the `segments` counter (setup is a few thousand segments'
// worth and amortised over the run). bm_host_bulk/6 runs the same
// connection over IPv6 (both Hosts dual-stack), for the IPv6/IPv4 ratio.
// bm_host_bulk_batched hands the receiver each round's datagrams as one batch
// between Host::hold_acks() and release_acks(), as StackRuntime does with one
// read of a TUN device's queue: one ACK per batch instead of one per two
// segments.

#include <benchmark/benchmark.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stack/host.hh"

namespace tinytcp::stack {
namespace {

using namespace std::chrono_literals;

const wire::Ipv4Address kReceiver = wire::Ipv4Address::from_octets(169, 254, 8, 1);
const wire::Ipv4Address kSender = wire::Ipv4Address::from_octets(169, 254, 8, 2);
const wire::Ipv6Address kReceiver6 =
    wire::Ipv6Address::from_groups({0xfd00, 0x7474, 8, 0, 0, 0, 0, 1});
const wire::Ipv6Address kSender6 =
    wire::Ipv6Address::from_groups({0xfd00, 0x7474, 8, 0, 0, 0, 0, 2});

HostConfig bulk_config(wire::Ipv4Address address, const wire::Ipv6Address& address6) {
  HostConfig c;
  c.address = address;
  c.ipv6 = address6;
  c.secret = "bm_host_bulk-secret-0123456789ab";
  c.tcp.receive_buffer_bytes = 1 << 20;  // tt-serve's defaults
  c.tcp.send_buffer_bytes = 1 << 20;
  return c;
}

// Datagrams in flight one way, in buffers reused from round to round.
class Wire {
 public:
  void push(std::string_view datagram) {
    if (count_ == buffers_.size()) {
      buffers_.emplace_back();
    }
    buffers_[count_++].assign(datagram.data(), datagram.size());
  }
  // Hands every queued datagram to `host` (which may queue more on the other wire).
  size_t deliver(Host& host, Instant now) {
    const size_t n = count_;
    count_ = 0;
    std::swap(buffers_, draining_);
    for (size_t i = 0; i < n; ++i) {
      host.receive_datagram(draining_[i], now);
    }
    return n;
  }
  bool empty() const { return count_ == 0; }

 private:
  std::vector<std::string> buffers_;
  std::vector<std::string> draining_;
  size_t count_ = 0;
};

class Bulk {
 public:
  explicit Bulk(IpFamily family, bool batched = false)
      : batched_(batched),
        receiver_(bulk_config(kReceiver, kReceiver6),
                  [this](std::string_view d) { to_sender_.push(d); }),
        sender_(bulk_config(kSender, kSender6),
                [this](std::string_view d) { to_receiver_.push(d); }),
        chunk_(256 * 1024, 'x') {
    const SocketId listener = *receiver_.listen(80);
    const IpAddress to = family == IpFamily::V6 ? IpAddress(kReceiver6) : IpAddress(kReceiver);
    client_ = *sender_.connect(to, 80, now_);
    while (!server_) {
      round();
      server_ = receiver_.accept(listener);
    }
  }

  // One pass of an event loop on each side; returns the data segments delivered.
  size_t round() {
    if (client_ != 0) {
      while (sender_.write(client_, chunk_, now_) > 0) {
      }
    }
    size_t segments = 0;
    while (!to_receiver_.empty() || !to_sender_.empty()) {
      if (batched_) {
        receiver_.hold_acks();
      }
      segments += to_receiver_.deliver(receiver_, now_);
      if (server_) {
        for (auto v = receiver_.peek(*server_); !v.empty(); v = receiver_.peek(*server_)) {
          bytes_ += v.size();
          receiver_.consume(*server_, v.size(), now_);
        }
      }
      if (batched_) {
        receiver_.release_acks(now_);
      }
      to_sender_.deliver(sender_, now_);
    }
    now_ += 10us;
    receiver_.tick(now_);
    sender_.tick(now_);
    return segments;
  }

  uint64_t bytes() const { return bytes_; }
  const tcp::TcpConnection* sender_connection() const { return sender_.connection(client_); }

 private:
  bool batched_;
  Instant now_;
  Wire to_receiver_;
  Wire to_sender_;
  Host receiver_;
  Host sender_;
  std::string chunk_;
  SocketId client_ = 0;
  std::optional<SocketId> server_;
  uint64_t bytes_ = 0;
};

void run_bulk(benchmark::State& state, bool batched) {
  Bulk bulk(state.range(0) == 6 ? IpFamily::V6 : IpFamily::V4, batched);
  const uint64_t bytes_before = bulk.bytes();
  uint64_t segments = 0;
  for (auto _ : state) {
    segments += bulk.round();
  }
  state.SetItemsProcessed(static_cast<int64_t>(segments));
  state.SetBytesProcessed(static_cast<int64_t>(bulk.bytes() - bytes_before));
  state.counters["segments"] = static_cast<double>(segments);
  if (const auto* c = bulk.sender_connection(); c != nullptr) {
    state.counters["retransmits"] = static_cast<double>(c->summary().retransmits);
  }
}

void bm_host_bulk(benchmark::State& state) {
  run_bulk(state, false);
}
BENCHMARK(bm_host_bulk)->Arg(4)->Arg(6);

void bm_host_bulk_batched(benchmark::State& state) {
  run_bulk(state, true);
}
BENCHMARK(bm_host_bulk_batched)->Arg(4)->Arg(6);

}  // namespace
}  // namespace tinytcp::stack

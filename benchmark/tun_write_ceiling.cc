// tun_write_ceiling: the fastest a TCP sender with one write(2) per segment
// can push bytes into a plain TUN device on this machine (issue 16). No TCP
// stack: a handshake with a kernel listener across the device, then full-sized
// segments back to back, one write each, as far as the peer's advertised
// window allows; ACKs are read (one read(2) each, as any plain-device stack
// must) only to move the window. No retransmission: the device is lossless,
// so a duplicate ACK or a stall means loss, and the run is reported void
// (exit 3).
//
//   ip netns exec NS socat -u TCP-LISTEN:5010,reuseaddr OPEN:/dev/null &
//   ip netns exec NS tun_write_ceiling --dev tun144 --port 5010 --bytes 1073741824
//
// Prints one line: bytes, seconds (first data write to last byte acked),
// Gbit/s, writes, reads, and the process's system time per write.
//
// --io uring (builds with liburing): still one WRITE per segment, but each
// burst's WRITEs (up to 64) go to the kernel in one io_uring_enter, so the
// system-call entry cost (~520 ns here) is paid once per burst, not per
// segment. ACKs are still read with one read(2) each.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "tun_ceiling_link.hh"
#include "wire/ipv4.hh"

namespace {

using namespace tinytcp;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kLocalPort = 40000;
constexpr uint32_t kIsn = 1000;
constexpr int kStallMs = 1000;  // no new ACK for this long: loss, run void
constexpr int kBurst = 64;      // writes between two looks at the ACK queue

struct Options {
  std::string dev = "tun144";
  std::string local = "169.254.144.9";
  std::string peer = "169.254.144.1";
  uint16_t port = 5010;
  uint64_t bytes = 1ull << 30;
  uint16_t mss = 1460;
  std::string io = "write";
};

class VoidRun : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CeilingSender {
 public:
  CeilingSender(const Options& options, uint32_t local_ip, uint32_t peer_ip)
      : options_(options),
        link_(options.dev, local_ip, peer_ip,
              options.io == "uring" ? bench::LinkIo::kUring : bench::LinkIo::kSyscall),
        payload_(options.mss, '\0') {}

  void run() {
    handshake();
    const auto cpu0 = bench::process_cpu_times();
    const auto writes0 = link_.counters().writes;
    const auto enters0 = link_.counters().enters;
    const auto t0 = Clock::now();
    transfer();
    const auto t1 = Clock::now();
    const auto cpu1 = bench::process_cpu_times();
    const uint64_t writes = link_.counters().writes - writes0;
    close();
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    fmt::print(
        "tun_write_ceiling: io={} bytes={} seconds={:.4f} gbps={:.3f} writes={} enters={} "
        "reads={} ignored={} user_s={:.3f} sys_s={:.3f} sys_us_per_write={:.2f}\n",
        options_.io, options_.bytes, seconds,
        static_cast<double>(options_.bytes) * 8 / seconds / 1e9, writes,
        link_.counters().enters - enters0, link_.counters().reads, link_.counters().ignored,
        cpu1.user_s - cpu0.user_s, cpu1.system_s - cpu0.system_s,
        (cpu1.system_s - cpu0.system_s) * 1e6 / static_cast<double>(writes));
  }

 private:
  wire::TcpHeader header(uint64_t seq) const {
    wire::TcpHeader h;
    h.src_port = kLocalPort;
    h.dst_port = options_.port;
    h.seqno = static_cast<uint32_t>(kIsn + seq);
    h.ackno = peer_ack_;
    h.ack = true;
    h.window = 65535;
    return h;
  }

  // The next segment of our connection, or nullopt (nothing waiting or not ours).
  std::optional<wire::TcpView> next_segment(bool* idle) {
    auto seg = link_.receive(idle);
    if (seg && (seg->header.src_port != options_.port || seg->header.dst_port != kLocalPort)) {
      return std::nullopt;
    }
    if (seg && seg->header.rst) {
      throw std::runtime_error("the peer reset the connection");
    }
    return seg;
  }

  std::optional<wire::TcpView> wait_segment(int timeout_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (Clock::now() < deadline) {
      bool idle = false;
      if (auto seg = next_segment(&idle)) {
        return seg;
      }
      if (idle) {
        link_.wait_readable(10);
      }
    }
    return std::nullopt;
  }

  void handshake() {
    wire::TcpHeader syn = header(0);
    syn.seqno = kIsn;
    syn.ack = false;
    syn.ackno = 0;
    syn.syn = true;
    syn.mss = options_.mss;
    syn.window_scale = 7;
    link_.send(syn, {});
    link_.flush();
    const auto synack = wait_segment(2000);
    if (!synack || !synack->header.syn || !synack->header.ack || synack->header.ackno != kIsn + 1) {
      throw std::runtime_error(fmt::format("no SYN-ACK from {}:{} (is a listener there?)",
                                           options_.peer, options_.port));
    }
    peer_ack_ = synack->header.seqno + 1;
    wscale_ = synack->header.window_scale.value_or(0);  // 0 also when ours was refused
    mss_ = std::min<uint64_t>(options_.mss, synack->header.mss.value_or(536));
    window_ = synack->header.window;  // never scaled on a SYN
    una_ = 1;
    nxt_ = 1;
    link_.send(header(nxt_), {});
    link_.flush();
  }

  // Reads every ACK waiting; true if any moved una_ or the window.
  bool drain_acks() {
    bool progressed = false;
    for (;;) {
      bool idle = false;
      const auto seg = next_segment(&idle);
      if (idle) {
        return progressed;
      }
      if (!seg || !seg->header.ack) {
        continue;
      }
      const uint32_t offset = seg->header.ackno - static_cast<uint32_t>(kIsn + una_);
      const uint64_t acked = una_ + offset;
      const uint64_t window = uint64_t{seg->header.window} << wscale_;
      if (offset > 0 && acked <= nxt_) {
        una_ = acked;
        dup_acks_ = 0;
        progressed = true;
      } else if (offset == 0 && nxt_ > una_ && window == window_ && seg->payload.empty()) {
        if (++dup_acks_ >= 3) {
          throw VoidRun(fmt::format("duplicate ACKs at byte {}: a segment was lost", una_ - 1));
        }
      }
      if (window != window_) {
        progressed = true;
      }
      window_ = window;
    }
  }

  void transfer() {
    const uint64_t end = 1 + options_.bytes;
    auto last_progress = Clock::now();
    while (una_ < end) {
      int burst = 0;
      while (nxt_ < end && burst < kBurst) {
        const uint64_t len = std::min<uint64_t>(mss_, end - nxt_);
        if (nxt_ + len > una_ + window_) {
          break;
        }
        link_.send(header(nxt_), std::string_view(payload_.data(), len));
        nxt_ += len;
        ++burst;
      }
      link_.flush();  // --io uring: the burst's WRITEs in one io_uring_enter
      if (drain_acks()) {
        last_progress = Clock::now();
      } else if (burst == 0) {
        // Window full and no ACK waiting: sleep until one arrives.
        link_.wait_readable(kStallMs);
        if (Clock::now() - last_progress > std::chrono::milliseconds(kStallMs)) {
          throw VoidRun(fmt::format("no ACK for {} ms at byte {}: stalled", kStallMs, una_ - 1));
        }
      }
    }
  }

  // FIN, then the peer's FIN acknowledged; best effort, outside the timing.
  void close() {
    wire::TcpHeader fin = header(nxt_);
    fin.fin = true;
    link_.send(fin, {});
    link_.flush();
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < deadline) {
      const auto seg = wait_segment(100);
      if (seg && seg->header.fin) {
        peer_ack_ = seg->header.seqno + 1;
        link_.send(header(nxt_ + 1), {});
        link_.flush();
        return;
      }
    }
    std::fprintf(stderr, "tun_write_ceiling: the peer did not close within 2 s\n");
  }

  Options options_;
  bench::TunCeilingLink link_;
  std::string payload_;
  uint32_t peer_ack_ = 0;
  uint8_t wscale_ = 0;
  uint64_t mss_ = 0;
  uint64_t window_ = 0;
  uint64_t una_ = 0;  // relative to the ISN: byte 1 is the first data byte
  uint64_t nxt_ = 0;
  int dup_acks_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"one write(2) per TCP segment into a plain TUN device, as fast as it goes"};
  app.add_option("--dev", options.dev, "existing TUN device")->capture_default_str();
  app.add_option("--local", options.local, "our address on it")->capture_default_str();
  app.add_option("--peer", options.peer, "the kernel listener's address")->capture_default_str();
  app.add_option("--port", options.port, "the kernel listener's port")->capture_default_str();
  app.add_option("--bytes", options.bytes, "bytes to send")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("--mss", options.mss, "largest segment payload")
      ->capture_default_str()
      ->check(CLI::Range(1, 1460));
  app.add_option("--io", options.io,
                 "write: one write(2) per segment; uring: a burst's writes in one io_uring_enter")
      ->capture_default_str()
      ->check(CLI::IsMember({"write", "uring"}));
  CLI11_PARSE(app, argc, argv);
  if (options.io == "uring" && !bench::uring_available()) {
    std::fprintf(stderr,
                 "tun_write_ceiling: built without liburing (Debian: liburing-dev); "
                 "--io uring is not available\n");
    return 2;
  }
  const auto local = wire::Ipv4Address::parse(options.local);
  const auto peer = wire::Ipv4Address::parse(options.peer);
  if (!local || !peer) {
    std::fprintf(stderr, "tun_write_ceiling: bad address '%s'\n",
                 (local ? options.peer : options.local).c_str());
    return 2;
  }
  try {
    CeilingSender sender(options, local->value, peer->value);
    sender.run();
  } catch (const VoidRun& e) {
    std::fprintf(stderr, "tun_write_ceiling: run void: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tun_write_ceiling: %s\n", e.what());
    return 1;
  }
  return 0;
}

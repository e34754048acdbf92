// tun_read_ceiling: the fastest a TCP receiver with one read(2) per segment
// can take bytes out of a plain TUN device on this machine (issue 16). No TCP
// stack: it answers one SYN to --port, then reads segments one per read,
// keeps only the next expected sequence number, and ACKs every --ack-every
// segments (default 2, as Linux; 0: only when the device has nothing more to
// read, as tinytcp's one coalesced ACK per event-loop pass) and whenever the
// device is empty (so a cwnd-limited sender never waits for a delayed ACK),
// always with the full window open; the data is discarded. Out-of-order or repeated data means
// the device lost a packet: the run is reported void (exit 3).
//
//   ip netns exec NS tun_read_ceiling --dev tun144 --port 5011 &
//   ip netns exec NS socat -u OPEN:file.bin TCP:169.254.144.9:5011
//
// --io uring (builds with liburing): still one READ per segment, but 64 of
// them (RWF_NOWAIT) go to the kernel in one io_uring_enter, together with the
// ACKs' WRITEs queued since the last one; a batch that finds the device empty
// ends early (its other READs complete with -EAGAIN), and the queued ACKs are
// submitted before the tool waits. The system-call entry cost is paid once
// per 64 segments, not per segment.
//
// Prints one line: bytes, seconds (first data segment to FIN), Gbit/s, reads,
// writes (ACKs), io_uring_enter calls, and the process's system time per read.

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

constexpr uint32_t kIsn = 5000;
constexpr uint8_t kWindowScale = 7;
constexpr uint16_t kWindow = 32768;  // << 7: 4 MiB, always open (the data is dropped)

struct Options {
  std::string dev = "tun144";
  std::string local = "169.254.144.9";
  std::string peer = "169.254.144.1";
  uint16_t port = 5011;
  int accept_timeout_s = 10;
  int ack_every = 2;
  std::string io = "read";
};

class VoidRun : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CeilingReceiver {
 public:
  CeilingReceiver(const Options& options, uint32_t local_ip, uint32_t peer_ip)
      : options_(options),
        link_(options.dev, local_ip, peer_ip,
              options.io == "uring" ? bench::LinkIo::kUringReads : bench::LinkIo::kSyscall) {}

  void run() {
    accept();
    transfer();
    const double seconds = std::chrono::duration<double>(t1_ - t0_).count();
    const double sys = cpu1_.system_s - cpu0_.system_s;
    fmt::print(
        "tun_read_ceiling: io={} bytes={} seconds={:.4f} gbps={:.3f} reads={} writes={} "
        "enters={} ignored={} user_s={:.3f} sys_s={:.3f} sys_us_per_read={:.2f}\n",
        options_.io, bytes_, seconds, static_cast<double>(bytes_) * 8 / seconds / 1e9, data_reads_,
        link_.counters().writes, link_.counters().enters, link_.counters().ignored,
        cpu1_.user_s - cpu0_.user_s, sys, sys * 1e6 / static_cast<double>(data_reads_));
  }

 private:
  wire::TcpHeader ack() const {
    wire::TcpHeader h;
    h.src_port = options_.port;
    h.dst_port = peer_port_;
    h.seqno = snd_nxt_;
    h.ackno = rcv_nxt_;
    h.ack = true;
    h.window = kWindow;
    return h;
  }

  std::optional<wire::TcpView> next_segment(bool* idle) {
    auto seg = link_.receive(idle);
    if (seg && (seg->header.dst_port != options_.port ||
                (peer_port_ != 0 && seg->header.src_port != peer_port_))) {
      return std::nullopt;
    }
    return seg;
  }

  void accept() {
    const auto deadline = Clock::now() + std::chrono::seconds(options_.accept_timeout_s);
    while (Clock::now() < deadline) {
      bool idle = false;
      const auto seg = next_segment(&idle);
      if (idle) {
        link_.wait_readable(100);
        continue;
      }
      if (!seg || !seg->header.syn || seg->header.ack) {
        continue;
      }
      peer_port_ = seg->header.src_port;
      rcv_nxt_ = seg->header.seqno + 1;
      wire::TcpHeader synack = ack();
      synack.seqno = kIsn;
      synack.syn = true;
      synack.mss = 1460;
      synack.window = 65535;
      if (seg->header.window_scale) {
        synack.window_scale = kWindowScale;
      }
      link_.send(synack, {});
      link_.flush();
      snd_nxt_ = kIsn + 1;
      return;
    }
    throw std::runtime_error(
        fmt::format("no SYN to port {} within {} s", options_.port, options_.accept_timeout_s));
  }

  void transfer() {
    int unacked = 0;
    auto last_data = Clock::now();
    for (;;) {
      bool idle = false;
      const auto seg = next_segment(&idle);
      if (idle) {
        if (unacked > 0) {
          link_.send(ack(), {});
          unacked = 0;
        }
        link_.flush();  // --io uring: the queued ACKs go out before we wait
        link_.wait_readable(1000);
        if (Clock::now() - last_data > std::chrono::seconds(2)) {
          throw VoidRun(fmt::format("no data for 2 s after {} bytes", bytes_));
        }
        continue;
      }
      if (!seg) {
        continue;
      }
      if (seg->header.rst) {
        throw std::runtime_error("the peer reset the connection");
      }
      if (seg->header.syn) {
        continue;  // a repeated SYN (our SYN-ACK is on its way); not data
      }
      if (!seg->payload.empty() || seg->header.fin) {
        last_data = Clock::now();
        if (seg->header.seqno != rcv_nxt_) {
          throw VoidRun(fmt::format("segment at {} bytes, expected {}: a packet was lost",
                                    seg->header.seqno - (rcv_isn() + 1), bytes_));
        }
      }
      if (!seg->payload.empty()) {
        if (bytes_ == 0) {
          t0_ = Clock::now();
          cpu0_ = bench::process_cpu_times();
          reads0_ = link_.counters().reads - 1;
        }
        bytes_ += seg->payload.size();
        rcv_nxt_ += static_cast<uint32_t>(seg->payload.size());
        if (++unacked == options_.ack_every) {
          link_.send(ack(), {});
          unacked = 0;
        }
      }
      if (seg->header.fin) {
        t1_ = Clock::now();
        cpu1_ = bench::process_cpu_times();
        data_reads_ = link_.counters().reads - reads0_;
        rcv_nxt_ += 1;
        wire::TcpHeader fin = ack();
        fin.fin = true;
        link_.send(fin, {});  // ACK of theirs and our FIN at once; their last ACK is not awaited
        link_.flush();
        return;
      }
    }
  }

  uint32_t rcv_isn() const { return rcv_nxt_ - static_cast<uint32_t>(bytes_) - 1; }

  Options options_;
  bench::TunCeilingLink link_;
  uint16_t peer_port_ = 0;
  uint32_t rcv_nxt_ = 0;
  uint32_t snd_nxt_ = 0;
  uint64_t bytes_ = 0;
  uint64_t reads0_ = 0;
  uint64_t data_reads_ = 0;
  Clock::time_point t0_;
  Clock::time_point t1_;
  bench::CpuTimes cpu0_;
  bench::CpuTimes cpu1_;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"one read(2) per TCP segment from a plain TUN device, as fast as it goes"};
  app.add_option("--dev", options.dev, "existing TUN device")->capture_default_str();
  app.add_option("--local", options.local, "our address on it")->capture_default_str();
  app.add_option("--peer", options.peer, "the kernel sender's address")->capture_default_str();
  app.add_option("--port", options.port, "port to accept one connection on")->capture_default_str();
  app.add_option("--accept-timeout", options.accept_timeout_s, "seconds to wait for the SYN")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--ack-every", options.ack_every,
                 "ACK every N segments; 0: only when the device is empty")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  app.add_option("--io", options.io,
                 "read: one read(2) per segment; uring: 64 READs per io_uring_enter")
      ->capture_default_str()
      ->check(CLI::IsMember({"read", "uring"}));
  CLI11_PARSE(app, argc, argv);
  if (options.io == "uring" && !bench::uring_available()) {
    std::fprintf(stderr,
                 "tun_read_ceiling: built without liburing (Debian: liburing-dev); "
                 "--io uring is not available\n");
    return 2;
  }
  const auto local = wire::Ipv4Address::parse(options.local);
  const auto peer = wire::Ipv4Address::parse(options.peer);
  if (!local || !peer) {
    std::fprintf(stderr, "tun_read_ceiling: bad address '%s'\n",
                 (local ? options.peer : options.local).c_str());
    return 2;
  }
  try {
    CeilingReceiver receiver(options, local->value, peer->value);
    receiver.run();
  } catch (const VoidRun& e) {
    std::fprintf(stderr, "tun_read_ceiling: run void: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tun_read_ceiling: %s\n", e.what());
    return 1;
  }
  return 0;
}

// syn-flood: spoofed TCP SYNs as fast as one core can write them, for the
// SYN-cookie measurement of issue 15 (tests/integration/syn_flood_test.sh,
// docs/benchmarks.md).
//
//   syn-flood --to 169.254.144.9:7 [--from random|A.B.C.D/N] [--seconds S]
//             [--rate PPS] [--mode raw|packet --dev tunN] [--batch N]
//
// Each SYN looks like a Linux SYN (MSS 1460, SACK-permitted, timestamps,
// window scale 7, window 64240, DF, TTL 64) from a random source address in
// --from, a random source port and a random ISN and TSval; the headers are
// written by wire/'s serializers, so the checksums are right and tinytcp's
// parser takes every one. Two ways in:
//   raw:    a raw IPv4 socket with IP_HDRINCL; the kernel routes each
//           datagram (to the TUN device when --to is tinytcp's address).
//   packet: an AF_PACKET socket bound to --dev that hands datagrams straight
//           to the device's transmit (no routing, qdisc bypassed).
// Both send batches with sendmmsg(2). Prints the SYNs sent in each second and
// a summary line (also when stopped early by SIGINT or SIGTERM); needs
// CAP_NET_RAW. Never run it outside a throwaway network
// namespace: it spoofs addresses.

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "util/random.hh"
#include "wire/ipv4.hh"
#include "wire/tcp_header.hh"

namespace {

using namespace tinytcp;
using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) {
  g_stop = 1;
}

constexpr size_t kSynBytes = wire::Ipv4Header::kMinSize + 40;  // Linux SYN: 20 + 40 bytes

[[noreturn]] void fail_errno(const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

struct Prefix {
  uint32_t base = 0;
  uint32_t mask = 0;  // 0: any address
};

Prefix parse_prefix(const std::string& text) {
  if (text == "random") {
    return {};
  }
  const auto slash = text.find('/');
  const auto address = wire::Ipv4Address::parse(text.substr(0, slash));
  int length = 32;
  if (slash != std::string::npos) {
    try {
      size_t used = 0;
      length = std::stoi(text.substr(slash + 1), &used);
      if (used != text.size() - slash - 1) {
        length = -1;
      }
    } catch (const std::exception&) {
      length = -1;
    }
  }
  if (!address || length < 0 || length > 32) {
    throw std::runtime_error(fmt::format("bad --from '{}': want random or A.B.C.D/N", text));
  }
  const uint32_t mask = wire::prefix_mask(static_cast<unsigned>(length));
  return {address->value & mask, mask};
}

// Writes one spoofed SYN into `out` (kSynBytes).
class SynMaker {
 public:
  SynMaker(Prefix from, uint32_t dst_ip, uint16_t dst_port, uint64_t seed)
      : from_(from), dst_ip_(dst_ip), dst_port_(dst_port), rng_(seed) {}

  size_t make(char* out) {
    const uint64_t a = rng_.next();
    const uint64_t b = rng_.next();
    uint32_t src = (static_cast<uint32_t>(a) & ~from_.mask) | from_.base;
    if (src == dst_ip_) {
      src ^= 1;  // never the destination itself (nor a zero host when the prefix is /32)
    }
    wire::TcpHeader tcp;
    tcp.src_port = static_cast<uint16_t>(1024 + (a >> 32) % (65536 - 1024));
    tcp.dst_port = dst_port_;
    tcp.seqno = static_cast<uint32_t>(b);
    tcp.syn = true;
    tcp.window = 64240;
    tcp.mss = 1460;
    tcp.sack_permitted = true;
    tcp.timestamps = wire::TcpTimestampOption{static_cast<uint32_t>(b >> 32), 0};
    tcp.window_scale = 7;
    wire::Ipv4Header ip;
    ip.total_length = static_cast<uint16_t>(kSynBytes);
    ip.id = static_cast<uint16_t>(a >> 48);
    ip.dont_fragment = true;
    ip.ttl = 64;
    ip.protocol = wire::TcpHeader::kProtocol;
    ip.src = wire::Ipv4Address{src};
    ip.dst = wire::Ipv4Address{dst_ip_};
    BufferWriter w(out, kSynBytes);
    wire::serialize(ip, w);
    wire::serialize_tcp(tcp, {}, src, dst_ip_, w);
    if (!w.ok() || w.size() != kSynBytes) {
      throw std::logic_error("a SYN did not serialize to 60 bytes");
    }
    return w.size();
  }

 private:
  Prefix from_;
  uint32_t dst_ip_;
  uint16_t dst_port_;
  Rng rng_;
};

int open_raw() {
  const int fd = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
  if (fd < 0) {
    fail_errno("socket(AF_INET, SOCK_RAW, IPPROTO_RAW) (needs CAP_NET_RAW)");
  }
  const int on = 1;
  if (::setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &on, sizeof(on)) < 0) {
    fail_errno("setsockopt IP_HDRINCL");
  }
  return fd;
}

int open_packet(const std::string& dev) {
  const unsigned index = ::if_nametoindex(dev.c_str());
  if (index == 0) {
    fail_errno(fmt::format("no device '{}' (--dev)", dev));
  }
  const int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
  if (fd < 0) {
    fail_errno("socket(AF_PACKET, SOCK_DGRAM) (needs CAP_NET_RAW)");
  }
  const int on = 1;
  if (::setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &on, sizeof(on)) < 0) {
    fail_errno("setsockopt PACKET_QDISC_BYPASS");
  }
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_IP);
  sll.sll_ifindex = static_cast<int>(index);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sll), sizeof(sll)) < 0) {
    fail_errno(fmt::format("bind AF_PACKET to {}", dev));
  }
  return fd;
}

int run(int argc, char** argv) {
  CLI::App app{
      "Spoofed TCP SYNs as fast as one core can write them (raw socket or AF_PACKET on a "
      "device). Prints SYNs sent per second. Needs CAP_NET_RAW; run it only inside a throwaway "
      "network namespace."};
  std::string to;
  std::string from = "random";
  double seconds = 10;
  uint64_t rate = 0;
  std::string mode = "raw";
  std::string dev;
  size_t batch = 64;
  uint64_t seed = 0;
  bool quiet = false;
  app.add_option("--to", to, "Destination IP:PORT (tinytcp's address and a listening port)")
      ->required();
  app.add_option("--from", from, "Source addresses: random, or a prefix such as 10.77.0.0/16")
      ->capture_default_str();
  app.add_option("--seconds", seconds, "How long to send")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  app.add_option("--rate", rate, "At most this many SYNs per second (0: as fast as possible)")
      ->capture_default_str();
  app.add_option("--mode", mode, "raw (IP_HDRINCL socket, routed) or packet (AF_PACKET on --dev)")
      ->check(CLI::IsMember({"raw", "packet"}))
      ->capture_default_str();
  app.add_option("--dev", dev, "Device for --mode packet, e.g. tun144");
  app.add_option("--batch", batch, "SYNs per sendmmsg(2)")
      ->check(CLI::Range(size_t{1}, size_t{1024}))
      ->capture_default_str();
  app.add_option("--seed", seed, "Random seed (0: from the clock)");
  app.add_flag("-q,--quiet", quiet, "Only the summary line");
  CLI11_PARSE(app, argc, argv);

  const auto colon = to.rfind(':');
  const auto dst = wire::Ipv4Address::parse(to.substr(0, colon));
  int port = 0;
  if (colon != std::string::npos) {
    port = std::atoi(to.c_str() + colon + 1);
  }
  if (!dst || port < 1 || port > 65535) {
    std::fprintf(stderr, "syn-flood: bad --to '%s': want IP:PORT\n", to.c_str());
    return 1;
  }
  if (mode == "packet" && dev.empty()) {
    std::fprintf(stderr, "syn-flood: --mode packet needs --dev\n");
    return 1;
  }
  if (seed == 0) {
    seed = static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  }
  SynMaker maker(parse_prefix(from), dst->value, static_cast<uint16_t>(port), seed);
  const int fd = mode == "raw" ? open_raw() : open_packet(dev);

  std::vector<char> packets(batch * kSynBytes);
  std::vector<iovec> iov(batch);
  std::vector<mmsghdr> msgs(batch);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(dst->value);
  for (size_t i = 0; i < batch; ++i) {
    iov[i] = {packets.data() + i * kSynBytes, kSynBytes};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
    if (mode == "raw") {
      msgs[i].msg_hdr.msg_name = &sin;
      msgs[i].msg_hdr.msg_namelen = sizeof(sin);
    }
  }

  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::time_point next_report = start + std::chrono::seconds(1);
  uint64_t sent = 0;
  uint64_t sent_at_report = 0;
  std::map<int, uint64_t> errors;  // errno -> SYNs not sent
  Clock::time_point now = start;
  // SIGINT or SIGTERM end the flood early, with the summary.
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  while (now < end && g_stop == 0) {
    size_t n = batch;
    if (rate > 0) {
      // Never ahead of `rate` since the start: what is due now, or a short sleep.
      const double elapsed_s = std::chrono::duration<double>(now - start).count();
      const auto due = static_cast<uint64_t>(elapsed_s * static_cast<double>(rate)) + 1;
      if (due <= sent) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        now = Clock::now();
        continue;
      }
      n = static_cast<size_t>(std::min<uint64_t>(batch, due - sent));
    }
    for (size_t i = 0; i < n; ++i) {
      maker.make(packets.data() + i * kSynBytes);
    }
    const int done = ::sendmmsg(fd, msgs.data(), static_cast<unsigned>(n), 0);
    if (done < 0) {
      if (errno != EINTR) {
        errors[errno] += n;
      }
    } else {
      sent += static_cast<uint64_t>(done);
      if (static_cast<size_t>(done) < n) {
        // sendmmsg stops at the first message that fails (its errno is lost):
        // the rest were not sent.
        errors[0] += n - static_cast<size_t>(done);
      }
    }
    now = Clock::now();
    if (now >= next_report) {
      if (!quiet) {
        std::printf("syn-flood: second %lld: %llu SYNs\n",
                    static_cast<long long>(
                        std::chrono::duration_cast<std::chrono::seconds>(now - start).count()),
                    static_cast<unsigned long long>(sent - sent_at_report));
        std::fflush(stdout);
      }
      sent_at_report = sent;
      next_report += std::chrono::seconds(1);
    }
  }
  ::close(fd);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  uint64_t failed = 0;
  std::string why;
  for (const auto& [error, count] : errors) {
    failed += count;
    why += fmt::format(", {} {}", count, error == 0 ? "short sendmmsg" : std::strerror(error));
  }
  std::printf("syn-flood: %llu SYNs in %.2f s: %.0f per second (%s, batch %zu), %llu not sent%s\n",
              static_cast<unsigned long long>(sent), elapsed, static_cast<double>(sent) / elapsed,
              mode.c_str(), batch, static_cast<unsigned long long>(failed), why.c_str());
  return sent > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "syn-flood: %s\n", e.what());
    return 1;
  }
}

// tt-serve: servers on tinytcp's own stack that kernel clients can reach.
//
//   tt-serve --dev tun144 [--address6 A | --no-ipv6] [--echo PORT] [--discard PORT] [--http DIR
//   [--http-port PORT]
//            [--allow-put] [--max-upload BYTES] [--header-timeout S] [--idle-timeout S]]
//
// echo: every byte back, close when the peer closes. discard: read and drop.
// http: HTTP/1.1 GET and HEAD of the regular files in DIR, and with
// --allow-put PUT /NAME to store a file there, one request per connection
// (apps/common/http_file_server.hh: limits and timeouts). Runs until SIGINT or
// SIGTERM, then prints a summary. Every server answers on both families: on
// tunN/tapN on 169.254.N.9 and fd00:7474:N::9 (scripts/tun.sh, tap.sh).

#include <csignal>
#include <cstdio>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "common/command_line.hh"
#include "common/http_file_server.hh"
#include "common/version_flag.hh"
#include "io/kernel_device.hh"
#include "runtime/stack_runtime.hh"
#include "tcp/congestion/congestion_control.hh"
#include "util/logging.hh"

namespace {

using namespace tinytcp;

io::EventLoop* g_loop = nullptr;
void on_signal(int) {
  if (g_loop != nullptr) {
    g_loop->stop();
  }
}

enum class Service { Echo, Discard, Http };

Duration seconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

class Server {
 public:
  Server(runtime::StackRuntime& runtime, apps::HttpFileServerConfig http)
      : rt_(runtime), host_(runtime.host()), http_(runtime.host(), std::move(http)) {}

  void listen(uint16_t port, Service service) {
    const auto id = host_.listen(port, 1024);
    if (!id) {
      throw std::runtime_error(
          fmt::format("cannot listen on port {}: {}", port, stack::to_string(id.error())));
    }
    listeners_[*id] = service;
  }

  void on_event(stack::SocketId id, stack::SocketEvent e) {
    if (const auto l = listeners_.find(id); l != listeners_.end()) {
      while (const auto c = host_.accept(id)) {
        ++accepted_;
        if (l->second == Service::Http) {
          http_.add(*c, now());
          continue;
        }
        conns_.emplace(*c, l->second);
        service(*c);
      }
      return;
    }
    if (http_.owns(id)) {
      http_.on_event(id, e, now());
      return;
    }
    if (e == stack::SocketEvent::Closed) {
      finish(id);
      return;
    }
    service(id);
  }

  uint64_t accepted() const { return accepted_; }
  uint64_t bytes_in() const { return bytes_in_ + http_.stats().bytes_in; }
  uint64_t bytes_out() const { return bytes_out_ + http_.stats().bytes_out; }
  apps::HttpFileServer& http() { return http_; }

 private:
  Instant now() const { return rt_.now(); }

  void finish(stack::SocketId id) {
    if (const auto* c = host_.connection(id); c != nullptr) {
      const auto sum = c->summary();
      spdlog::debug(
          "connection {}: {} segments in, {} out ({} bytes), {} retransmits ({} fast, {} RTOs, "
          "{} by SACK), {} duplicate ACKs, cwnd {}, srtt {} us",
          id, sum.segments_in, sum.segments_out, sum.bytes_out, sum.retransmits,
          sum.fast_retransmits, sum.rtos, sum.sack_recovered_segments, sum.duplicate_acks,
          sum.sender.cwnd,
          std::chrono::duration_cast<std::chrono::microseconds>(sum.sender.srtt).count());
    }
    if (conns_.erase(id) > 0) {
      host_.close(id, now());
    }
  }

  void service(stack::SocketId id) {
    const auto it = conns_.find(id);
    if (it == conns_.end()) {
      return;
    }
    if (it->second == Service::Echo) {
      echo(id);
    } else {
      discard(id);
    }
  }

  void echo(stack::SocketId id) {
    for (auto v = host_.peek(id); !v.empty(); v = host_.peek(id)) {
      const size_t n = host_.write(id, v, now());
      if (n == 0) {
        return;  // send buffer full: continue on Writable
      }
      bytes_in_ += n;
      bytes_out_ += n;
      host_.consume(id, n, now());
    }
    if (peer_finished(id)) {
      finish(id);
    }
  }

  // EOF: the peer's FIN came and every byte was read (SocketInfo's
  // peer_finished, without building the whole SocketInfo on every read).
  bool peer_finished(stack::SocketId id) const {
    const tcp::TcpConnection* c = host_.connection(id);
    return c != nullptr && c->inbound().is_finished();
  }

  void discard(stack::SocketId id) {
    for (auto v = host_.peek(id); !v.empty(); v = host_.peek(id)) {
      bytes_in_ += v.size();
      host_.consume(id, v.size(), now());
    }
    if (peer_finished(id)) {
      finish(id);
    }
  }

  runtime::StackRuntime& rt_;
  stack::Host& host_;
  apps::HttpFileServer http_;
  std::unordered_map<stack::SocketId, Service> listeners_;
  std::unordered_map<stack::SocketId, Service> conns_;
  uint64_t accepted_ = 0;
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
};

int run(int argc, char** argv) {
  CLI::App app{"Echo, discard and HTTP servers on tinytcp's TCP/IP stack."};
  apps::add_version_flag(app, "tt-serve");
  apps::describe_exit_statuses(
      app,
      {{0, "stopped by SIGINT or SIGTERM (the summary on stdout)"},
       {apps::kBadArguments, "bad arguments, or it cannot start (device, directory)"}},
      "Every error is one line on stderr.");
  runtime::RuntimeOptions options;
  std::string address;
  std::string address6;
  bool no_ipv6 = false;
  int echo_port = 0;
  int discard_port = 0;
  std::string http_dir;
  int http_port = 80;
  int verbose = 0;
  bool quiet = false;
  uint64_t buffer_bytes = 1 << 20;
  app.add_option("--dev", options.dev,
                 "tunN (TSO/GSO super-packets where the kernel can; tunN+nooffload: one packet per "
                 "read and write, up to 64 per io_uring_enter; +nouring: one read() or write() "
                 "each), tapN or udp:PEER_IP:PORT[@LOCAL_PORT]")
      ->capture_default_str();
  app.add_option("--address", address, "Our IPv4 address (default 169.254.N.9 for tunN/tapN)");
  app.add_option("--address6", address6,
                 "Our IPv6 address (default fd00:7474:N::9 for tunN/tapN; on tapN it answers "
                 "after duplicate address detection, about 1 s)");
  app.add_flag("--no-ipv6", no_ipv6, "No IPv6 address (IPv4 only)");
  app.add_option("--pcap", options.pcap, "Capture every packet to this pcap file");
  app.add_option("--impair", options.impair, "Impairment each way, e.g. loss=1%,delay=10ms");
  app.add_option("--impair-in", options.impair_in, "Impairment of what we receive only");
  app.add_option("--impair-out", options.impair_out, "Impairment of what we send only");
  app.add_option("--echo", echo_port, "Echo server port")->check(CLI::Range(1, 65535));
  app.add_option("--discard", discard_port, "Discard server port")->check(CLI::Range(1, 65535));
  app.add_option("--http", http_dir, "Serve the regular files of this directory over HTTP")
      ->check(CLI::ExistingDirectory);
  app.add_option("--http-port", http_port, "HTTP port")->check(CLI::Range(1, 65535));
  apps::HttpFileServerConfig http;
  app.add_flag("--allow-put", http.allow_put,
               "Accept PUT /NAME into the --http directory (anyone who reaches the port can "
               "write there: there is no authentication)");
  app.add_option("--max-upload", http.max_upload_bytes, "Largest PUT body, bytes")
      ->capture_default_str();
  double header_timeout = to_seconds(http.header_timeout);
  double idle_timeout = to_seconds(http.idle_timeout);
  double linger_timeout = to_seconds(http.linger_timeout);
  app.add_option("--header-timeout", header_timeout,
                 "Seconds from accept to a complete request head, else reset")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--idle-timeout", idle_timeout,
                 "Seconds without a byte in or out before an HTTP connection is reset")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  app.add_option("--linger-timeout", linger_timeout,
                 "Seconds to wait for the client's FIN after a response (lingering close)")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_option("--max-connections", http.max_connections,
                 "HTTP connections at once; past it the oldest one without a request head is "
                 "reset (the stack holds 4096 sockets in all: more turns this off)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--buffer", buffer_bytes, "Send and receive buffer per connection, bytes")
      ->check(CLI::Range(uint64_t{4096}, uint64_t{256} << 20))
      ->capture_default_str();
  app.add_option("--cc", options.tcp.congestion_control,
                 "Congestion control: " + std::string(tcp::kCongestionControlSpecs))
      ->capture_default_str();
  bool no_syn_cookies = false;
  app.add_flag("--no-syn-cookies", no_syn_cookies,
               "Drop SYNs when a listener's SYN queue is full instead of answering with SYN "
               "cookies (as net.ipv4.tcp_syncookies=0)");
  app.add_flag("-v,--verbose", verbose, "More logging (repeat for trace)");
  app.add_flag("-q,--quiet", quiet, "Errors only");
  if (const auto status = apps::parse_command_line(app, argc, argv, "tt-serve")) {
    return *status;
  }
  setup_logging(quiet ? -1 : verbose);
  if (echo_port == 0 && discard_port == 0 && http_dir.empty()) {
    std::fprintf(stderr, "tt-serve: nothing to serve: give --echo, --discard and/or --http\n");
    return 1;
  }
  if (const auto cc =
          tcp::make_congestion_control(options.tcp.congestion_control, tcp::CongestionParams{});
      !cc) {
    std::fprintf(stderr, "tt-serve: %s\n", cc.error().c_str());
    return 1;
  }
  if (!address.empty()) {
    options.address = wire::Ipv4Address::parse(address);
    if (!options.address) {
      std::fprintf(stderr, "tt-serve: bad --address '%s'\n", address.c_str());
      return 1;
    }
  }
  if (!address6.empty()) {
    options.address6 = wire::Ipv6Address::parse(address6);
    if (!options.address6) {
      std::fprintf(stderr, "tt-serve: bad --address6 '%s'\n", address6.c_str());
      return 1;
    }
  }
  options.ipv6 = !no_ipv6;
  options.syn_cookies = !no_syn_cookies;
  // Many connections at once: moderate buffers (1 MiB each way unless --buffer).
  options.tcp.receive_buffer_bytes = buffer_bytes;
  options.tcp.send_buffer_bytes = buffer_bytes;

  runtime::StackRuntime runtime(options);
  http.dir = http_dir;
  http.header_timeout = seconds(header_timeout);
  http.idle_timeout = seconds(idle_timeout);
  http.linger_timeout = seconds(linger_timeout);
  Server server(runtime, http);
  runtime.loop().add_deadline_source([&] { return server.http().next_deadline(); },
                                     [&](Instant now) { server.http().tick(now); });
  if (echo_port != 0) {
    server.listen(static_cast<uint16_t>(echo_port), Service::Echo);
  }
  if (discard_port != 0) {
    server.listen(static_cast<uint16_t>(discard_port), Service::Discard);
  }
  if (!http_dir.empty()) {
    server.listen(static_cast<uint16_t>(http_port), Service::Http);
  }
  runtime.host().set_event_callback(
      [&](stack::SocketId id, stack::SocketEvent e) { server.on_event(id, e); });
  g_loop = &runtime.loop();
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const auto& ipv6 = runtime.host().config().ipv6;
  spdlog::info("serving on {}{} ({}){}{}{}", fmt::format("{}", runtime.host().config().address),
               ipv6 ? fmt::format(" and {}", *ipv6) : "", options.dev,
               echo_port ? fmt::format(", echo :{}", echo_port) : "",
               discard_port ? fmt::format(", discard :{}", discard_port) : "",
               http_dir.empty() ? ""
                                : fmt::format(", http :{} from {} (PUT {})", http_port, http_dir,
                                              http.allow_put ? "allowed" : "disabled"));
  const Instant start = runtime.now();
  runtime.loop().run();
  const double seconds = to_seconds(runtime.now() - start);
  const auto& stats = runtime.host().stats();
  std::printf(
      "tt-serve: %llu connections, %llu bytes in, %llu bytes out in %.1f s, %llu resets sent, "
      "%llu pings answered\n",
      static_cast<unsigned long long>(server.accepted()),
      static_cast<unsigned long long>(server.bytes_in()),
      static_cast<unsigned long long>(server.bytes_out()), seconds,
      static_cast<unsigned long long>(stats.resets_sent),
      static_cast<unsigned long long>(stats.echo_replies));
  std::printf(
      "tt-serve: %llu SYN cookies sent, %llu accepted, %llu SYNs dropped for a full SYN queue, "
      "%llu bad cookies\n",
      static_cast<unsigned long long>(stats.syn_cookies_sent),
      static_cast<unsigned long long>(stats.syn_cookies_accepted),
      static_cast<unsigned long long>(stats.drops[stack::HostDrop::SynBacklogFull]),
      static_cast<unsigned long long>(stats.drops[stack::HostDrop::BadCookie]));
  std::printf(
      "tt-serve: %llu frag-needed ICMPs believed (%llu stale), %llu connections to the "
      "TIME-WAIT table (%llu overflowed, %llu reopened by a SYN)\n",
      static_cast<unsigned long long>(stats.path_mtu_updates),
      static_cast<unsigned long long>(stats.drops[stack::HostDrop::IcmpStale]),
      static_cast<unsigned long long>(stats.time_wait_entered),
      static_cast<unsigned long long>(stats.time_wait_overflow),
      static_cast<unsigned long long>(stats.time_wait_reused));
  if (const auto* v6 = runtime.host().ipv6_input(); v6 != nullptr) {
    std::printf("tt-serve: IPv6 on %s: %llu pings answered, %llu ICMPv6 errors sent\n",
                fmt::format("{}", *ipv6).c_str(),
                static_cast<unsigned long long>(v6->icmp_stats().echo_replies),
                static_cast<unsigned long long>(v6->icmp_stats().errors));
  }
  if (!http_dir.empty()) {
    const auto& h = server.http().stats();
    std::printf(
        "tt-serve: http: %llu requests, %llu uploads, %llu not found, %llu bad requests, %llu PUTs "
        "refused (no --allow-put), %llu uploads too large, %llu upload failures; reset %llu at the "
        "header timeout, %llu idle, %llu evicted at --max-connections, %llu as the file failed or "
        "shrank; %llu lingering closes (%llu timed out)\n",
        static_cast<unsigned long long>(h.requests), static_cast<unsigned long long>(h.uploads),
        static_cast<unsigned long long>(h.not_found),
        static_cast<unsigned long long>(h.bad_requests),
        static_cast<unsigned long long>(h.puts_refused),
        static_cast<unsigned long long>(h.uploads_too_large),
        static_cast<unsigned long long>(h.upload_failures),
        static_cast<unsigned long long>(h.header_timeouts),
        static_cast<unsigned long long>(h.idle_timeouts),
        static_cast<unsigned long long>(h.evicted),
        static_cast<unsigned long long>(h.file_read_errors),
        static_cast<unsigned long long>(h.lingering_closes),
        static_cast<unsigned long long>(h.linger_timeouts));
  }
  const auto& loop = runtime.loop().stats();
  const auto& rt = runtime.stats();
  const auto& dev = runtime.device().stats();
  std::printf(
      "tt-serve: %llu loop wake-ups, %llu datagrams out in %llu batches (%llu ACKs coalesced), "
      "device %llu packets in, %llu out (%llu not sent)\n",
      static_cast<unsigned long long>(loop.wakeups), static_cast<unsigned long long>(rt.datagrams),
      static_cast<unsigned long long>(rt.batches),
      static_cast<unsigned long long>(rt.acks_coalesced),
      static_cast<unsigned long long>(dev.packets_received),
      static_cast<unsigned long long>(dev.packets_sent),
      static_cast<unsigned long long>(dev.send_drops));
  if (const auto* kernel = dynamic_cast<const io::KernelDevice*>(&runtime.device());
      kernel != nullptr && kernel->offload()) {
    const auto& o = kernel->offload_stats();
    std::printf(
        "tt-serve: offload: %llu super-packets in, %llu out (%llu segments), %llu checksums "
        "completed\n",
        static_cast<unsigned long long>(o.super_packets_received),
        static_cast<unsigned long long>(o.super_packets_sent),
        static_cast<unsigned long long>(o.segments_coalesced),
        static_cast<unsigned long long>(o.checksums_completed));
  }
  g_loop = nullptr;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tt-serve: %s\n", e.what());
    return 1;
  }
}

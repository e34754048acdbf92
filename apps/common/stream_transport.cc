#include "common/stream_transport.hh"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/sender_trace.hh"
#include "common/stepped_connection.hh"
#include "common/stream_client.hh"
#include "common/stream_server.hh"
#include "io/impairment_spec.hh"
#include "runtime/stack_runtime.hh"
#include "stack/host.hh"
#include "tcp/congestion/congestion_control.hh"
#include "tcp/tcp_config.hh"

namespace tinytcp::apps {

namespace {

// Addresses inside the UDP tunnel: the receiver and the sender.
const wire::Ipv4Address kTunnelReceiver = wire::Ipv4Address::from_octets(169, 254, 0, 1);
const wire::Ipv4Address kTunnelSender = wire::Ipv4Address::from_octets(169, 254, 0, 2);

}  // namespace

wire::Ipv4Address tunnel_receiver_address() {
  return kTunnelReceiver;
}

// TCP settings for bulk transfer over lossy links: large buffers, timers for
// heavy random loss, and no giving up by retransmission count (the app's idle
// timeout decides).
tcp::TcpConfig transfer_tcp_config(const TransportOptions& options) {
  tcp::TcpConfig config;
  config.congestion_control =
      options.cc.empty() ? default_congestion_control(options.transport) : options.cc;
  config.sack = options.sack;
  config.delayed_ack = options.delayed_ack;
  config.send_buffer_bytes = 8 << 20;
  // The app fills whatever it may: let it fill about twice the window, so a
  // short path works in a few hundred KiB of ring instead of 8 MiB.
  config.autotune_send_buffer = true;
  config.receive_buffer_bytes = 8 << 20;
  config.max_retransmissions = 1000;
  config.max_syn_retransmissions = 1000;
  config.max_syn_ack_retransmissions = 1000;
  // Random loss times segments out often enough to look like a path that
  // drops big datagrams: no black-hole detection (the UDP tunnel's MTU is
  // known; over TUN an ICMP fragmentation-needed still lowers the MSS).
  config.black_hole_timeouts = 0;
  // Lossy-link timers: a lost SYN or retransmission is the expected case, not
  // a sign of a slow path (docs/file-transfer.md, "Timers").
  config.rto_initial = std::chrono::milliseconds(100);
  // Not Linux's 200 ms: the tail of a transfer on a lossy link is where
  // timeouts still happen (after a tail loss probe whose ACKs were lost, say),
  // and each one costs the floor. 30 ms is well above our receiver's 5 ms
  // delayed ACK; against Linux's 40 ms one, a premature timeout costs one
  // segment at the end of a transfer (Linux sets the same per route with
  // `ip route ... rto_min`).
  config.rto_min = std::chrono::milliseconds(30);
  config.rto_after_syn_timeout = Duration::zero();
  // A lost SYN or SYN-ACK is retried after 5, 10, 20, 40, 80 ms, then at the
  // RTO: at 30% loss each way half the handshakes lose one (a 10 MiB transfer
  // takes 40-100 ms; docs/file-transfer.md, "Timers"). A path slower than 5 ms
  // gets a few spurious SYNs; the data phase is unaffected (TcpConfig::syn_rto).
  config.syn_rto = std::chrono::milliseconds(5);
  config.linear_timeouts = 20;
  config.recovery_probes = true;  // the tail of a lossy transfer: no RTO wait
  // A lost last segment (the receiver's RESULT, say) is probed after 2 SRTT
  // plus the peer's delayed ACK, not after the RTO: ours delays at most 5 ms;
  // Linux up to 40 ms, where an early probe costs one segment.
  config.delayed_ack_timeout = std::chrono::milliseconds(options.delayed_ack_ms);
  config.tlp_max_ack_delay = std::chrono::milliseconds(options.delayed_ack_ms + 5);
  // A peer delaying its ACK longer than the bulk profile's 5 ms (an
  // interactive profile, --delayed-ack-ms 40) must not look like a loss.
  config.rto_min =
      std::max<Duration>(config.rto_min, std::chrono::milliseconds(options.delayed_ack_ms + 10));
  config.nagle = options.nagle;
  return config;
}

runtime::RuntimeOptions runtime_options(const TransportOptions& options, bool listening) {
  runtime::RuntimeOptions runtime;
  runtime.impair = options.impair;
  runtime.pcap = options.pcap;
  runtime.seed = options.seed;
  // One ACK per loop pass where it says all the others did. Since the
  // coalescer keeps ACKs with SACK blocks the newest no longer lists, the
  // efficiency at 5% loss is what it is without coalescing (about 95%; the
  // first coalescer, which dropped them, cost 77%).
  runtime.coalesce_acks = true;
  runtime.tcp = transfer_tcp_config(options);
  if (options.transport == "tun") {
    runtime.dev = options.dev.empty() ? "tun144" : options.dev;
  } else {
    runtime.address = listening ? kTunnelReceiver : kTunnelSender;
  }
  return runtime;
}

namespace {

constexpr Duration kTickInterval = std::chrono::milliseconds(100);
// The app's bytes moved into the send buffer per loop pass. Filling a large
// send buffer in one go would hold the first segment back until it is full
// (8 MiB of reading and hashing for the file apps); in slices, the stack
// sends and takes ACKs in between.
constexpr size_t kOutputPerPass = 256 * 1024;

// ---------------------------------------------------------------- kernel

class KernelConnection : public StreamConnection {
 public:
  explicit KernelConnection(int fd) : fd_(fd) {}
  ~KernelConnection() override {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }

  PumpOutcome pump(const PumpIo& io, Duration idle_timeout) override {
    return apps::pump(fd_, io, idle_timeout);
  }

  void close(Duration /*linger*/, bool /*until_fin_acked*/) override {
    // The kernel delivers what was written after close() on its own.
    last_ = stats();
    ::close(fd_);
    fd_ = -1;
  }

  TransportStats stats() const override {
    if (fd_ < 0) {
      return last_;
    }
    const auto info = kernel_tcp_info(fd_);
    TransportStats s;
    s.retransmits = info.total_retransmits;
    s.payload_sent = info.bytes_sent;
    return s;
  }

  uint64_t unacknowledged() const override { return fd_ >= 0 ? kernel_unacknowledged(fd_) : 0; }

 private:
  int fd_;
  TransportStats last_;
};

// ---------------------------------------------------------------- tinytcp

class StackConnection : public StreamConnection {
 public:
  StackConnection(std::shared_ptr<runtime::StackRuntime> runtime, stack::SocketId id,
                  const std::string& trace_path)
      : runtime_(std::move(runtime)), id_(id) {
    if (!trace_path.empty()) {
      SenderTrace::attach(std::make_shared<SenderTrace>(trace_path), runtime_->host(), id_);
    }
  }

  ~StackConnection() override {
    if (open_) {
      runtime_->host().abort(id_, runtime_->now());
    }
  }

  PumpOutcome pump(const PumpIo& io, Duration idle_timeout) override {
    auto& host = runtime_->host();
    Instant last_progress = runtime_->now();
    Instant last_tick = last_progress;
    uint64_t last_unacknowledged = unacknowledged();
    for (;;) {
      // The peer acknowledging what we wrote is progress too: with a large
      // send buffer the app may have nothing to write for a long time.
      bool progress = unacknowledged() != last_unacknowledged;
      last_unacknowledged = unacknowledged();
      const StepOutcome step = step_stack_stream(host, id_, io, runtime_->now(), kOutputPerPass);
      if (step.end) {
        return *step.end;
      }
      progress = progress || step.progress;
      const Instant now = runtime_->now();
      if (progress) {
        last_progress = now;
      } else if (now - last_progress > idle_timeout) {
        return {PumpResult::Timeout,
                fmt::format("no progress for {:.0f} s", to_seconds(idle_timeout))};
      }
      if (io.tick && now - last_tick >= kTickInterval) {
        io.tick();
        last_tick = now;
      }
      if (runtime_->loop().stopped()) {
        return {PumpResult::Error, "interrupted"};
      }
      // A full slice means the app may have more for the send buffer: look
      // at the network without waiting, then go on filling.
      runtime_->loop().run_once(step.more_output ? Duration::zero() : kTickInterval);
    }
  }

  void close(Duration linger, bool until_fin_acked) override {
    if (!open_) {
      return;
    }
    auto& host = runtime_->host();
    host.shutdown_write(id_, runtime_->now());
    // Done when our FIN, and so every byte before it, was acknowledged, or
    // (unless until_fin_acked) when the peer's FIN arrived: then it has
    // finished with the exchange and may be gone before it acknowledges ours.
    runtime_->run_until(
        [&] {
          const auto info = host.info(id_);
          if (!info) {
            return true;
          }
          // Bytes the peer still sends are not wanted any more.
          if (const auto in = host.peek(id_); !in.empty()) {
            host.consume(id_, in.size(), runtime_->now());
          }
          const tcp::TcpState state = info->state;
          const bool fin_acked = state == tcp::TcpState::FinWait2 ||
                                 state == tcp::TcpState::TimeWait || state == tcp::TcpState::Closed;
          if (until_fin_acked) {
            return fin_acked;
          }
          return state != tcp::TcpState::FinWait1 && state != tcp::TcpState::Established;
        },
        linger);
    last_ = stats();
    host.close(id_, runtime_->now());
    // What the last pass queued (the ACK of the peer's FIN, say) leaves now,
    // not with a loop pass that may never come.
    runtime_->flush();
    open_ = false;
  }

  TransportStats stats() const override {
    const auto* c = runtime_->host().connection(id_);
    if (!open_ || c == nullptr) {
      return last_;
    }
    TransportStats s;
    s.retransmits = c->sender_stats().retransmitted_segments;
    s.payload_sent = c->sender_stats().bytes_sent;
    return s;
  }

  uint64_t unacknowledged() const override {
    const auto* c = runtime_->host().connection(id_);
    return open_ && c != nullptr ? c->sender().outbound().bytes_buffered() : 0;
  }

 private:
  std::shared_ptr<runtime::StackRuntime> runtime_;
  stack::SocketId id_;
  bool open_ = true;
  TransportStats last_;
};

std::unique_ptr<StreamConnection> connect_stack(const TransportOptions& options, const HostPort& to,
                                                Duration timeout) {
  auto runtime_config = runtime_options(options, false);
  stack::IpAddress remote = kTunnelReceiver;
  if (options.transport == "udp") {
    runtime_config.dev = udp_device(to);
  } else {
    const auto address = stack::IpAddress::parse(to.host);
    if (!address) {
      throw std::runtime_error(
          fmt::format("--to {}: the tun transport needs an IP address", to.host));
    }
    remote = *address;
  }
  auto runtime = std::make_shared<runtime::StackRuntime>(runtime_config);
  auto& host = runtime->host();
  const auto id = host.connect(remote, to.port, runtime->now());
  if (!id) {
    throw std::runtime_error(
        fmt::format("cannot reach {}: {}", to.to_string(), stack::to_string(id.error())));
  }
  auto connection = std::make_unique<StackConnection>(runtime, *id, options.trace);
  const bool settled = runtime->run_until(
      [&] {
        const auto info = host.info(*id);
        return !info || info->state != tcp::TcpState::SynSent;
      },
      timeout);
  const auto info = host.info(*id);
  if (!settled || !info || info->state == tcp::TcpState::Closed) {
    const std::string why = !settled ? fmt::format("no answer in {:.0f} s", to_seconds(timeout))
                            : info && info->close_reason ? tcp::to_string(*info->close_reason)
                                                         : "connection failed";
    throw std::runtime_error(fmt::format("cannot reach {}: {}", to.to_string(), why));
  }
  return connection;
}

}  // namespace

std::string default_congestion_control(const std::string& transport) {
  return transport == "kernel" ? "" : tcp::kFileTransferCongestionControl;
}

std::optional<std::string> validate(const TransportOptions& options) {
  if (options.transport != "udp" && options.transport != "tun" && options.transport != "kernel") {
    return fmt::format("--transport {}: expected udp, tun or kernel", options.transport);
  }
  if (options.transport == "kernel") {
    for (const auto& [flag, set] :
         {std::pair{"--impair/--loss/--delay/...", !options.impair.empty()},
          std::pair{"--pcap", !options.pcap.empty()}, std::pair{"--trace", !options.trace.empty()},
          std::pair{"--no-sack", !options.sack},
          std::pair{"--no-delayed-ack", !options.delayed_ack},
          std::pair{"--delayed-ack-ms", options.delayed_ack_ms != kBulkDelayedAckMs},
          std::pair{"--nagle", options.nagle}, std::pair{"--dev", !options.dev.empty()}}) {
      if (set) {
        return fmt::format("{} applies to the udp and tun transports, not kernel", flag);
      }
    }
    return std::nullopt;
  }
  if (!options.cc.empty()) {
    if (auto cc = tcp::make_congestion_control(options.cc, {}); !cc) {
      return fmt::format("--cc {}: {}", options.cc, cc.error());
    }
  }
  return std::nullopt;
}

void add_transport_flags(CLI::App& app, TransportFlags& flags) {
  auto& o = flags.options;
  app.add_option("--transport", o.transport,
                 "udp: tinytcp's TCP inside a UDP tunnel (no privileges); tun: tinytcp's TCP "
                 "on a TUN device to a kernel peer; kernel: kernel TCP")
      ->check(CLI::IsMember({"udp", "tun", "kernel"}))
      ->capture_default_str();
  app.add_option("--dev", o.dev, "TUN device for --transport tun (default tun144)");
  app.add_option("--cc", o.cc,
                 "Congestion control: " + std::string(tcp::kCongestionControlSpecs) +
                     " for udp/tun (default " + default_congestion_control("udp") +
                     "); for kernel any of /proc/sys/net/ipv4/tcp_available_congestion_control");
  app.add_flag("--no-sack", flags.no_sack, "Do not offer SACK (udp/tun)");
  app.add_flag("--no-delayed-ack", flags.no_delayed_ack,
               "Acknowledge every segment at once, not every second one or after 5 ms (udp/tun)");
  app.add_option("--delayed-ack-ms", o.delayed_ack_ms,
                 "Longest delay of an ACK, 1-500 ms; timers allowing for the peer's delayed ACK "
                 "follow it, so give both ends the same value (Linux: 40) (udp/tun)")
      ->check(CLI::Range(1, 500))
      ->capture_default_str();
  app.add_flag("--nagle", o.nagle,
               "Nagle's algorithm: a small segment waits while data is unacknowledged, as "
               "kernel TCP does by default (udp/tun; default off)");
  app.add_option("--loss", flags.loss, "Random loss each way, e.g. 5% (udp/tun)");
  app.add_option("--delay", flags.delay, "Added one-way delay, e.g. 10ms (udp/tun)");
  app.add_option("--jitter", flags.jitter, "Delay jitter, e.g. 2ms (udp/tun)");
  app.add_option("--reorder", flags.reorder, "Reordering probability, e.g. 1% (udp/tun)");
  app.add_option("--duplicate", flags.duplicate, "Duplication probability (udp/tun)");
  app.add_option("--impair", o.impair,
                 "Full impairment spec, e.g. 'loss=1%,burst=0.01/0.25' (udp/tun)");
  app.add_option("--seed", o.seed, "Seed of the impairment stage")->capture_default_str();
  app.add_option("--pcap", o.pcap, "Capture our packets to this pcap file (udp/tun)");
  app.add_flag("--robust", o.robust,
               "A robust session over the transport: the stream survives outages of the link "
               "(reconnects, resumes, every byte once; both ends need it)");
  app.add_option("--trace", o.trace,
                 "CSV of the sender's cwnd, ssthresh, srtt, rto, bytes in flight and "
                 "retransmits over time (udp/tun)");
}

Expected<TransportOptions, std::string> TransportFlags::finish() const {
  TransportOptions o = options;
  o.sack = !no_sack;
  o.delayed_ack = !no_delayed_ack;
  std::string spec = o.impair;
  for (const auto& [key, value] :
       {std::pair{"loss", &loss}, std::pair{"delay", &delay}, std::pair{"jitter", &jitter},
        std::pair{"reorder", &reorder}, std::pair{"duplicate", &duplicate}}) {
    if (!value->empty()) {
      spec += fmt::format("{}{}={}", spec.empty() ? "" : ",", key, *value);
    }
  }
  if (!spec.empty()) {
    if (auto parsed = io::parse_impairment(spec); !parsed) {
      return make_unexpected(fmt::format("impairment: {}", parsed.error()));
    }
  }
  o.impair = spec;
  if (auto error = validate(o)) {
    return make_unexpected(*error);
  }
  return o;
}

std::unique_ptr<StreamConnection> connect_stream(const TransportOptions& options,
                                                 const HostPort& to, Duration timeout) {
  if (options.robust) {
    return connect_stepped(connect_streams(options, to), to, timeout);
  }
  if (options.transport == "kernel") {
    return std::make_unique<KernelConnection>(connect_tcp(to, timeout, options.cc));
  }
  return connect_stack(options, to, timeout);
}

}  // namespace tinytcp::apps

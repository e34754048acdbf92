#include "runtime/stack_runtime.hh"

#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/ack_coalescer.hh"
#include "io/impaired_adapter.hh"
#include "io/impairment_spec.hh"
#include "io/pcap_capture.hh"
#include "io/system_clock.hh"
#include "io/tap_device.hh"
#include "io/tun_device.hh"
#include "io/udp_tunnel.hh"
#include "net/datagram_sink.hh"
#include "net/frame_sink.hh"
#include "net/network_interface.hh"
#include "util/buffer.hh"
#include "util/hash.hh"
#include "wire/ipv4.hh"

namespace tinytcp::runtime {

// ARP and Ethernet between a TAP device and the Host.
struct StackRuntime::Tap : net::FrameSink, net::DatagramSink {
  StackRuntime& runtime;
  net::NetworkInterface nic;
  wire::Ipv4Address gateway;

  Tap(StackRuntime& r, const net::NetworkInterfaceConfig& config, wire::Ipv4Address gw)
      : runtime(r), nic(config, *this), gateway(gw) {
    nic.set_datagram_sink(this, 0);
  }
  void send_frame(std::string_view frame) override { runtime.top_->send(frame); }
  void on_datagram(std::string_view datagram, size_t, Instant now) override {
    runtime.host_->receive_datagram(datagram, now);
  }
};

namespace {

// "tun144" -> 144 (the subnet convention of scripts/tun.sh and tap.sh).
std::optional<uint8_t> device_number(const std::string& dev, const std::string& prefix) {
  if (dev.rfind(prefix, 0) != 0 || dev.size() == prefix.size()) {
    return std::nullopt;
  }
  const std::string digits = dev.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 3) {
    return std::nullopt;
  }
  const int n = std::stoi(digits);
  if (n > 255) {
    return std::nullopt;
  }
  return static_cast<uint8_t>(n);
}

}  // namespace

StackRuntime::StackRuntime(RuntimeOptions options) : options_(std::move(options)) {
  using Offload = RuntimeOptions::Offload;
  for (const auto& [suffix, mode] :
       {std::pair<std::string_view, Offload>{"+offload", Offload::kOn},
        std::pair<std::string_view, Offload>{"+nooffload", Offload::kOff}}) {
    if (options_.dev.size() > suffix.size() &&
        options_.dev.compare(options_.dev.size() - suffix.size(), suffix.size(), suffix) == 0) {
      options_.dev.resize(options_.dev.size() - suffix.size());
      options_.offload = mode;
    }
  }
  const std::string& dev = options_.dev;
  if (options_.offload == Offload::kOn && !device_number(dev, "tun")) {
    throw std::runtime_error(fmt::format("--dev {}: offload is for tunN devices only", dev));
  }
  std::optional<uint8_t> subnet;
  if (dev.rfind("udp:", 0) == 0) {
    std::string spec = dev.substr(4);
    io::UdpTunnelConfig config;
    if (const auto at = spec.find('@'); at != std::string::npos) {
      const auto local = io::UdpEndpoint::parse("0.0.0.0:" + spec.substr(at + 1));
      if (!local) {
        throw std::runtime_error(fmt::format("bad local port in --dev {}", dev));
      }
      config.local = *local;
      spec = spec.substr(0, at);
    }
    if (!spec.empty()) {
      const auto peer = io::UdpEndpoint::parse(spec);
      if (!peer) {
        throw std::runtime_error(
            fmt::format("--dev {}: expected udp:PEER_IP:PORT[@LOCAL_PORT]", dev));
      }
      config.peer = *peer;
    }
    device_ = std::make_unique<io::UdpTunnel>(config);
  } else if ((subnet = device_number(dev, "tun"))) {
    io::KernelDeviceConfig config{dev};
    const bool impaired =
        !options_.impair.empty() || !options_.impair_in.empty() || !options_.impair_out.empty();
    if (options_.offload == Offload::kOn ||
        (options_.offload == Offload::kAuto && options_.offload_by_default && !impaired)) {
      config.offload = true;
      try {
        device_ = std::make_unique<io::TunDevice>(config);
      } catch (const std::system_error& e) {
        if (options_.offload == Offload::kOn) {
          throw;  // asked for by name
        }
        // A kernel without IFF_VNET_HDR or TSO4 for TUN: plain packets.
        spdlog::debug("{}: no offload ({}), plain packets", dev, e.what());
        config.offload = false;
      }
    }
    if (!device_) {
      device_ = std::make_unique<io::TunDevice>(config);
    }
    options_.offload = config.offload ? Offload::kOn : Offload::kOff;
  } else if ((subnet = device_number(dev, "tap"))) {
    device_ = std::make_unique<io::TapDevice>(dev);
  } else {
    throw std::runtime_error(
        fmt::format("--dev {}: expected tunN, tapN or udp:PEER_IP:PORT[@LOCAL_PORT]", dev));
  }
  top_ = device_.get();
  batch_.resize(kMaxBatchBytes);
  batch_spans_.reserve(kMaxBatchDatagrams);
  batch_views_.reserve(kMaxBatchDatagrams);

  const std::string& impair_out =
      options_.impair_out.empty() ? options_.impair : options_.impair_out;
  const std::string& impair_in = options_.impair_in.empty() ? options_.impair : options_.impair_in;
  if (!impair_out.empty() || !impair_in.empty()) {
    const auto out = io::parse_impairment(impair_out);
    if (!out) {
      throw std::runtime_error(fmt::format("impairment '{}': {}", impair_out, out.error()));
    }
    const auto in = io::parse_impairment(impair_in);
    if (!in) {
      throw std::runtime_error(fmt::format("impairment '{}': {}", impair_in, in.error()));
    }
    impaired_ = std::make_unique<io::ImpairedAdapter>(*top_, io::SystemClock::instance(), *out, *in,
                                                      options_.seed);
    top_ = impaired_.get();
  }
  if (!options_.pcap.empty()) {
    capture_ = std::make_unique<io::PcapCapture>(*top_, options_.pcap);
    top_ = capture_.get();
  }

  stack::HostConfig host;
  if (options_.address) {
    host.address = *options_.address;
  } else if (subnet) {
    host.address = wire::Ipv4Address::from_octets(169, 254, *subnet, 9);
  } else {
    host.address = wire::Ipv4Address::from_octets(169, 254, 0, 9);
  }
  if (subnet) {
    kernel_peer_ = wire::Ipv4Address::from_octets(169, 254, *subnet, 1);
  }
  host.tcp = options_.tcp;
  host.syn_cookies = options_.syn_cookies;
  // RFC 9293 §3.7.1: MSS = MTU - 20 (IPv4) - 20 (TCP). The TcpConfig default
  // (1460, for MTU 1500) follows the device's MTU, larger or smaller; an MSS the
  // app chose is only lowered to fit.
  const size_t mtu = top_->mtu();
  if (mtu > 40) {
    const size_t link_mss = std::min<size_t>(mtu - 40, 65535 - 40);
    host.tcp.mss = host.tcp.mss == tcp::TcpConfig{}.mss
                       ? static_cast<uint16_t>(link_mss)
                       : static_cast<uint16_t>(std::min<size_t>(link_mss, host.tcp.mss));
  }
  host_ = std::make_unique<stack::Host>(
      host, [this](std::string_view datagram) { send_datagram(datagram); });

  if (top_->link_type() == io::LinkType::kEthernet) {
    net::NetworkInterfaceConfig nic;
    const auto random = secure_random_bytes(6);
    for (size_t i = 0; i < 6; ++i) {
      nic.mac.bytes[i] = static_cast<uint8_t>(random[i]);
    }
    nic.mac.bytes[0] = static_cast<uint8_t>((nic.mac.bytes[0] & 0xfe) | 0x02);  // local, unicast
    nic.ip = host.address;
    nic.mtu = static_cast<uint16_t>(mtu);
    tap_ = std::make_unique<Tap>(*this, nic, kernel_peer_.value_or(host.address));
    tap_source_ = loop_.add_deadline_source([this] { return tap_->nic.next_deadline(); },
                                            [this](Instant now) { tap_->nic.tick(now); });
    tap_->nic.start(loop_.now());
  }

  adapter_source_ =
      loop_.add_adapter(*top_, [this](std::string_view packet) { on_packet(packet); });
  host_source_ = loop_.add_deadline_source([this] { return host_->next_deadline(); },
                                           [this](Instant now) { host_->tick(now); });
  top_->set_send_failure_handler([this](std::string_view packet) { on_refused(packet); });
  flush_source_ = loop_.add_before_wait([this] {
    flush();
    report_refused();
  });
  spdlog::debug("stack: {} on {} (mtu {}, mss {}{})", host.address, dev, mtu, host.tcp.mss,
                options_.offload == Offload::kOn ? ", offload" : "");
}

StackRuntime::~StackRuntime() {
  flush();
  top_->set_send_failure_handler(nullptr);
  loop_.remove_before_wait(flush_source_);
  loop_.remove_deadline_source(host_source_);
  if (tap_source_ != 0) {
    loop_.remove_deadline_source(tap_source_);
  }
  loop_.remove_adapter(*top_, adapter_source_);
}

void StackRuntime::on_packet(std::string_view packet) {
  if (tap_) {
    tap_->nic.receive_frame(packet, loop_.now());
  } else {
    host_->receive_datagram(packet, loop_.now());
  }
}

void StackRuntime::send_datagram(std::string_view datagram) {
  if (tap_) {
    // Everything on the link is on-link: the next hop is the destination
    // itself when it is in our /24, else the kernel side (a gateway).
    // The Host wrote this datagram: read its destination (bytes 16-19) without
    // parsing and verifying it again on this per-packet path.
    BufferReader header(datagram);
    header.skip(16);
    const wire::Ipv4Address dst{header.u32()};
    wire::Ipv4Address next_hop = tap_->gateway;
    if (header.ok() && (dst.value & 0xffffff00u) == (host_->config().address.value & 0xffffff00u)) {
      next_hop = dst;
    }
    tap_->nic.send_datagram(datagram, next_hop, loop_.now());
  } else {
    queue_datagram(datagram);
  }
}

void StackRuntime::queue_datagram(std::string_view datagram) {
  if (datagram.size() > batch_.size()) {
    flush();
    top_->send(datagram);  // never: a datagram is at most 64 KiB
    return;
  }
  if (batch_spans_.size() == kMaxBatchDatagrams || batch_bytes_ + datagram.size() > batch_.size()) {
    flush();
  }
  std::copy(datagram.begin(), datagram.end(),
            batch_.begin() + static_cast<ptrdiff_t>(batch_bytes_));
  batch_spans_.emplace_back(batch_bytes_, datagram.size());
  batch_bytes_ += datagram.size();
}

void StackRuntime::flush() {
  if (batch_spans_.empty()) {
    return;
  }
  batch_views_.clear();
  for (const auto& [offset, size] : batch_spans_) {
    batch_views_.emplace_back(batch_.data() + offset, size);
  }
  batch_spans_.clear();
  batch_bytes_ = 0;
  size_t count = batch_views_.size();
  stats_.datagrams += count;
  if (options_.coalesce_acks) {
    const size_t kept = io::coalesce_acks(batch_views_.data(), count);
    stats_.acks_coalesced += count - kept;
    count = kept;
  }
  ++stats_.batches;
  top_->send_batch(batch_views_.data(), count);
}

void StackRuntime::on_refused(std::string_view packet) {
  if (top_->link_type() == io::LinkType::kEthernet) {
    // An Ethernet II frame: only IPv4 is the Host's (ARP goes again on its own timers).
    constexpr size_t kEthernetHeader = 14;
    if (packet.size() <= kEthernetHeader || static_cast<uint8_t>(packet[12]) != 0x08 ||
        packet[13] != 0x00) {
      return;
    }
    packet.remove_prefix(kEthernetHeader);
  }
  if (refused_.size() >= kMaxRefused) {
    ++stats_.refused_unreported;
    return;
  }
  refused_.emplace_back(packet);
}

void StackRuntime::report_refused() {
  if (refused_.empty()) {
    return;
  }
  // Swapped out first: the Host never sends from on_send_failed, but keep
  // the list stable whatever it does.
  std::vector<std::string> refused;
  refused.swap(refused_);
  for (const std::string& datagram : refused) {
    host_->on_send_failed(datagram, loop_.now());
    ++stats_.refused_resent;
  }
}

bool StackRuntime::run_until(const std::function<bool()>& done, Duration timeout) {
  const Instant end = loop_.now() + timeout;
  while (!done()) {
    const Instant now = loop_.now();
    if (now >= end || loop_.stopped()) {
      return done();
    }
    loop_.run_once(end - now);
  }
  return true;
}

}  // namespace tinytcp::runtime

#include "runtime/stack_runtime.hh"

#include <algorithm>
#include <stdexcept>
#include <string>
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
#include "util/random.hh"
#include "wire/ipv4.hh"
#include "wire/ipv6.hh"

namespace tinytcp::runtime {

// ARP, NDP and Ethernet between a TAP device and the Host.
struct StackRuntime::Tap : net::FrameSink, net::DatagramSink {
  StackRuntime& runtime;
  Rng rng;  // before nic: it draws the IPv6 ReachableTime in nic's constructor
  net::NetworkInterface nic;
  wire::Ipv4Address gateway;
  wire::Ipv6Address gateway6;

  Tap(StackRuntime& r, const net::NetworkInterfaceConfig& config, wire::Ipv4Address gw,
      const wire::Ipv6Address& gw6, uint64_t seed)
      : runtime(r), rng(seed), nic(config, *this, &rng), gateway(gw), gateway6(gw6) {
    nic.set_datagram_sink(this, 0);
  }
  void send_frame(std::string_view frame) override { runtime.top_->send(frame); }
  void on_datagram(std::string_view datagram, size_t, Instant now, bool link_multicast) override {
    runtime.host_->receive_datagram(datagram, now, link_multicast);
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

// fd00:7474:N::host, N's decimal digits read as the hex group (tun144:
// fd00:7474:144::), as scripts/tuntap.sh writes it.
wire::Ipv6Address device_ipv6(uint8_t n, uint16_t host) {
  uint16_t group = 0;
  for (const char c : std::to_string(n)) {
    group = static_cast<uint16_t>(group * 16 + (c - '0'));
  }
  return wire::Ipv6Address::from_groups({0xfd00, 0x7474, group, 0, 0, 0, 0, host});
}

uint64_t seed_from(std::string_view bytes) {
  uint64_t seed = 0;
  for (const char c : bytes) {
    seed = (seed << 8) | static_cast<uint8_t>(c);
  }
  return seed;
}

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86dd;

// Removes `suffix` from the end of `dev` (leaving a name before it); true if
// it was there.
bool take_suffix(std::string& dev, std::string_view suffix) {
  if (dev.size() <= suffix.size() ||
      dev.compare(dev.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  dev.resize(dev.size() - suffix.size());
  return true;
}

}  // namespace

void RuntimeOptions::take_device_suffixes() {
  for (bool took = true; took;) {
    took = false;
    if (take_suffix(dev, "+uring")) {
      uring = Uring::kOn;
      took = true;
    }
    if (take_suffix(dev, "+nouring")) {
      uring = Uring::kOff;
      took = true;
    }
    if (take_suffix(dev, "+offload")) {
      offload = Offload::kOn;
      took = true;
    }
    if (take_suffix(dev, "+nooffload")) {
      offload = Offload::kOff;
      took = true;
    }
  }
}

StackRuntime::StackRuntime(RuntimeOptions options) : options_(std::move(options)) {
  using Offload = RuntimeOptions::Offload;
  options_.take_device_suffixes();
  if (options_.uring == RuntimeOptions::Uring::kOn && options_.offload == Offload::kAuto) {
    options_.offload = Offload::kOff;  // io_uring batches plain writes
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
      config.uring = options_.uring != RuntimeOptions::Uring::kOff;  // plain: kAuto too
      device_ = std::make_unique<io::TunDevice>(config);
    }
    options_.offload = config.offload ? Offload::kOn : Offload::kOff;
  } else if ((subnet = device_number(dev, "tap"))) {
    io::KernelDeviceConfig config{dev};
    config.uring = options_.uring == RuntimeOptions::Uring::kOn;
    device_ = std::make_unique<io::TapDevice>(config);
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
  const size_t mtu = top_->mtu();
  if (options_.ipv6) {
    if (options_.address6) {
      host.ipv6 = *options_.address6;
    } else if (subnet) {
      host.ipv6 = device_ipv6(*subnet, 9);
    }
    if (host.ipv6 && mtu < wire::ipv6::kMinimumMtu) {
      // RFC 8200 §5: no IPv6 on a link below 1280 bytes.
      if (options_.address6) {
        throw std::runtime_error(
            fmt::format("{}: MTU {} is below IPv6's 1280; no IPv6 address possible", dev, mtu));
      }
      spdlog::warn("{}: MTU {} is below 1280: IPv6 off", dev, mtu);
      host.ipv6.reset();
    }
    if (host.ipv6 && subnet) {
      kernel_peer6_ = device_ipv6(*subnet, 1);
    }
  }
  host.tcp = options_.tcp;
  host.syn_cookies = options_.syn_cookies;
  // RFC 9293 §3.7.1: MSS = MTU - 20 (IPv4) - 20 (TCP). The TcpConfig default
  // (1460, for MTU 1500) follows the device's MTU, larger or smaller; an MSS the
  // app chose is only lowered to fit. (The Host takes 20 bytes more off for IPv6.)
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
    const auto random = secure_random_bytes(14);  // MAC, then the NDP Rng's seed
    for (size_t i = 0; i < 6; ++i) {
      nic.mac.bytes[i] = static_cast<uint8_t>(random[i]);
    }
    nic.mac.bytes[0] = static_cast<uint8_t>((nic.mac.bytes[0] & 0xfe) | 0x02);  // local, unicast
    nic.ip = host.address;
    nic.mtu = static_cast<uint16_t>(mtu);
    // NDP on the IPv6 side, with duplicate address detection of our address
    // (RFC 4862 §5.4: one probe, 1 s; the address answers nothing until then).
    nic.ipv6 = host.ipv6;
    tap_ = std::make_unique<Tap>(*this, nic, kernel_peer_.value_or(host.address),
                                 kernel_peer6_.value_or(host.ipv6.value_or(wire::Ipv6Address{})),
                                 seed_from(std::string_view(random).substr(6)));
    tap_source_ = loop_.add_deadline_source([this] { return tap_->nic.next_deadline(); },
                                            [this](Instant now) { tap_->nic.tick(now); });
    tap_->nic.start(loop_.now());
  }

  on_packet_ = [this](std::string_view packet) { on_packet(packet); };
  if (top_->fd() >= 0) {
    loop_.add_fd(top_->fd(), io::EventLoop::kReadable, [this](uint32_t) { receive_batch(); });
  }
  adapter_source_ = loop_.add_deadline_source([this] { return top_->next_deadline(); },
                                              [this](Instant) { receive_batch(); });
  host_source_ = loop_.add_deadline_source([this] { return host_->next_deadline(); },
                                           [this](Instant now) { host_->tick(now); });
  top_->set_send_failure_handler([this](std::string_view packet) { on_refused(packet); });
  flush_source_ = loop_.add_before_wait([this] {
    flush();
    report_refused();
  });
  spdlog::debug("stack: {}{}{} on {} (mtu {}, mss {}{}{})", host.address, host.ipv6 ? " and " : "",
                host.ipv6 ? fmt::format("{}", *host.ipv6) : "", dev, mtu, host.tcp.mss,
                options_.offload == Offload::kOn ? ", offload" : "",
                options_.uring == RuntimeOptions::Uring::kOff ? ", no io_uring" : "");
}

StackRuntime::~StackRuntime() {
  flush();
  top_->set_send_failure_handler(nullptr);
  loop_.remove_before_wait(flush_source_);
  loop_.remove_deadline_source(host_source_);
  if (tap_source_ != 0) {
    loop_.remove_deadline_source(tap_source_);
  }
  if (top_->fd() >= 0) {
    loop_.remove_fd(top_->fd());
  }
  loop_.remove_deadline_source(adapter_source_);
}

Instant StackRuntime::now() const {
  return batch_now_ ? *batch_now_ : loop_.now();
}

void StackRuntime::receive_batch() {
  // One clock read for the batch (Linux stamps a NAPI poll's packets alike):
  // it is at most one batch old, about 64 packets' work.
  batch_now_ = loop_.now();
  if (options_.coalesce_acks) {
    host_->hold_acks();
  }
  top_->receive_batch(on_packet_);
  const Instant now = *batch_now_;
  batch_now_.reset();
  if (options_.coalesce_acks) {
    host_->release_acks(now);
  }
}

void StackRuntime::on_packet(std::string_view packet) {
  if (tap_) {
    tap_->nic.receive_frame(packet, *batch_now_);
  } else {
    host_->receive_datagram(packet, *batch_now_);
  }
}

void StackRuntime::send_datagram(std::string_view datagram) {
  if (tap_) {
    if (!datagram.empty() && (static_cast<uint8_t>(datagram[0]) >> 4) == 6) {
      tap_->nic.send_ipv6_datagram(datagram, ipv6_next_hop(datagram), now());
      return;
    }
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
    tap_->nic.send_datagram(datagram, next_hop, now());
  } else {
    queue_datagram(datagram);
  }
}

wire::Ipv6Address StackRuntime::ipv6_next_hop(std::string_view datagram) const {
  // The destination is bytes 24-39 of the fixed header the Host wrote. On-link
  // (RFC 4861 §5.2): multicast, link-local and our own /64; anything else goes
  // through the kernel side, as IPv4 beyond the /24 does.
  constexpr size_t kDestination = 24;
  wire::Ipv6Address dst;
  if (datagram.size() < kDestination + dst.bytes.size()) {
    return tap_->gateway6;  // never: the Host writes whole headers
  }
  std::copy_n(datagram.data() + kDestination, dst.bytes.size(), dst.bytes.begin());
  const auto& ours = host_->config().ipv6;
  if (dst.is_multicast() || dst.is_link_local() || (ours && dst.in_prefix(*ours, 64))) {
    return dst;
  }
  return tap_->gateway6;
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
    // An Ethernet II frame: IPv4 and IPv6 datagrams are the Host's (ARP and
    // NDP, also IPv6, go again on their own timers; the Host ignores those).
    constexpr size_t kEthernetHeader = 14;
    if (packet.size() <= kEthernetHeader) {
      return;
    }
    const auto ether_type = static_cast<uint16_t>((static_cast<uint8_t>(packet[12]) << 8) |
                                                  static_cast<uint8_t>(packet[13]));
    if (ether_type != kEtherTypeIpv4 && ether_type != kEtherTypeIpv6) {
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

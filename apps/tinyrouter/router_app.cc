#include "tinyrouter/router_app.hh"

#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tinytcp::apps {

namespace {

constexpr Duration kIdleWait = std::chrono::milliseconds(200);

// Ours differ from the kernel's: locally administered 02:74:72 ("tr"), then
// two bytes of the seed and the interface index.
wire::MacAddress our_mac(size_t index, uint64_t seed) {
  return wire::MacAddress{{0x02, 0x74, 0x72, static_cast<uint8_t>(seed >> 8),
                           static_cast<uint8_t>(seed), static_cast<uint8_t>(index + 1)}};
}

}  // namespace

std::string capture_path(const std::string& pcap, const std::string& name, size_t interfaces) {
  if (pcap.empty() || interfaces <= 1) {
    return pcap;
  }
  const size_t slash = pcap.rfind('/');
  const size_t dot = pcap.rfind('.');
  if (dot == std::string::npos || dot == 0 || (slash != std::string::npos && dot < slash)) {
    return pcap + "-" + name;
  }
  return pcap.substr(0, dot) + "-" + name + pcap.substr(dot);
}

RouterApp::RouterApp(const RouterAppOptions& options) {
  for (size_t i = 0; i < options.interfaces.size(); ++i) {
    const InterfaceSpec& spec = options.interfaces[i];
    std::optional<io::ImpairmentConfig> impairment;
    for (const auto& imp : options.impairments) {
      if (imp.name == spec.name) {
        impairment = imp.config;
      }
    }
    ports_.push_back(std::make_unique<TapPort>(
        spec.name, impairment, capture_path(options.pcap, spec.name, options.interfaces.size()),
        options.seed + 2 * i, options.offload));
    TapPort& port = *ports_.back();
    net::NetworkInterfaceConfig config;
    config.ip = spec.address;
    config.mac = our_mac(i, options.seed);
    const auto kernel_mac = port.device().kernel_mac();
    if (config.mac.bytes == kernel_mac) {
      config.mac.bytes[3] ^= 0x80;
    }
    config.mtu = static_cast<uint16_t>(port.adapter().mtu());
    config.offload = port.offload();
    router_.add_interface(config, port);
  }
  for (const net::Route& route : options.routes) {
    router_.add_route(route);
  }
  for (size_t i = 0; i < ports_.size(); ++i) {
    sources_.push_back(loop_.add_adapter(ports_[i]->adapter(), [this, i](std::string_view frame) {
      std::string_view bytes;
      net::LinkOffload offload;
      if (ports_[i]->unwrap(frame, bytes, offload)) {
        router_.receive_frame(i, bytes, loop_.now(), &offload);
      }
    }));
  }
  timers_ = loop_.add_deadline_source([this] { return router_.next_deadline(); },
                                      [this](Instant now) { router_.tick(now); });
}

RouterApp::~RouterApp() {
  loop_.remove_deadline_source(timers_);
  for (size_t i = 0; i < ports_.size(); ++i) {
    loop_.remove_adapter(ports_[i]->adapter(), sources_[i]);
  }
}

void RouterApp::run(const std::atomic<bool>& stop) {
  router_.start(loop_.now());
  while (!stop.load(std::memory_order_relaxed)) {
    loop_.run_once(kIdleWait);
  }
}

nlohmann::json RouterApp::stats() {
  const net::RouterStats& s = router_.stats();
  nlohmann::json drops = nlohmann::json::object();
  for (size_t d = 0; d < static_cast<size_t>(net::RouterDrop::kCount); ++d) {
    const auto why = static_cast<net::RouterDrop>(d);
    if (s.drops[why] != 0) {
      drops[net::to_string(why)] = s.drops[why];
    }
  }
  nlohmann::json interfaces = nlohmann::json::array();
  for (size_t i = 0; i < ports_.size(); ++i) {
    const net::NetworkInterfaceStats& n = router_.interface(i).stats();
    const io::AdapterStats& a = ports_[i]->device().stats();
    interfaces.push_back({{"name", ports_[i]->name()},
                          {"frames_received", a.packets_received},
                          {"frames_sent", a.packets_sent},
                          {"send_drops", a.send_drops},
                          {"offload", ports_[i]->offload()},
                          {"impaired_out", ports_[i]->impaired_out()},
                          {"arp_requests_sent", n.arp_requests_sent},
                          {"arp_replies_sent", n.arp_replies_sent},
                          {"arp_learned", n.arp_learned},
                          {"datagrams_queued", n.datagrams_queued},
                          {"interface_drops", n.drops.total()}});
  }
  nlohmann::json offload_errors = nlohmann::json::object();
  for (size_t e = 0; e < static_cast<size_t>(net::OffloadError::kCount); ++e) {
    const auto why = static_cast<net::OffloadError>(e);
    if (s.offload_errors[why] != 0) {
      offload_errors[net::to_string(why)] = s.offload_errors[why];
    }
  }
  return {{"forwarded", s.forwarded},
          {"gso_forwarded", s.gso_forwarded},
          {"gso_segmented", s.gso_segmented},
          {"segments_sent", s.segments_sent},
          {"checksums_completed", s.checksums_completed},
          {"offload_errors", offload_errors},
          {"fragments_sent", s.fragments_sent},
          {"delivered_locally", s.delivered_locally},
          {"icmp_sent", s.icmp_sent},
          {"ipv4_errors", s.ipv4_errors.total()},
          {"drops", drops},
          {"interfaces", interfaces}};
}

std::string RouterApp::summary() const {
  const net::RouterStats& s = router_.stats();
  return fmt::format("forwarded {}, fragments {}, local {}, icmp sent {}, drops {}", s.forwarded,
                     s.fragments_sent, s.delivered_locally, s.icmp_sent,
                     s.drops.total() + s.ipv4_errors.total());
}

}  // namespace tinytcp::apps

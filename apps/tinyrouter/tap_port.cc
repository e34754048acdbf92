#include "tinyrouter/tap_port.hh"

#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "io/impaired_adapter.hh"
#include "io/pcap_capture.hh"
#include "io/system_clock.hh"
#include "io/virtio_net_header.hh"

namespace tinytcp::apps {

TapPort::TapPort(const std::string& name, const std::optional<io::ImpairmentConfig>& impairment,
                 const std::string& pcap, uint64_t seed, bool offload)
    : name_(name) {
  io::KernelDeviceConfig config{name};
  config.offload = offload && pcap.empty() && !impairment;
  try {
    try {
      device_ = std::make_unique<io::TapDevice>(config);
    } catch (const std::system_error& e) {
      if (!config.offload) {
        throw;
      }
      spdlog::warn("{}: no offloads ({}); plain frames", name, e.what());
      config.offload = false;
      device_ = std::make_unique<io::TapDevice>(config);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("--if {}: cannot open the TAP device: {}", name, e.what()));
  }
  top_ = device_.get();
  if (!pcap.empty()) {
    try {
      capture_ = std::make_unique<io::PcapCapture>(*top_, pcap);
    } catch (const std::system_error& e) {
      throw std::runtime_error(fmt::format("--pcap {}: {}", pcap, e.what()));
    }
    top_ = capture_.get();
  }
  below_ = top_;
  if (impairment) {
    impaired_ = std::make_unique<io::ImpairedAdapter>(*top_, io::SystemClock::instance(),
                                                      *impairment, io::ImpairmentConfig{}, seed);
    top_ = impaired_.get();
  }
}

void TapPort::send_frame(std::string_view frame) {
  // EtherType at bytes 12-13: ARP (0x0806) bypasses the impairment.
  const bool arp = frame.size() >= 14 && static_cast<uint8_t>(frame[12]) == 0x08 &&
                   static_cast<uint8_t>(frame[13]) == 0x06;
  (arp ? below_ : top_)->send(frame);
}

void TapPort::send_offloaded_frame(std::string_view frame, const net::LinkOffload& offload) {
  if (!device_->offload()) {
    send_frame(frame);  // not reached: the Router offloads only to ports that do
    return;
  }
  io::VirtioNetHeader h;
  h.flags = offload.flags & io::VirtioNetHeader::kNeedsChecksum;
  h.gso_type = offload.gso_type;
  h.header_length = offload.header_length;
  h.gso_size = offload.gso_size;
  h.checksum_start = offload.checksum_start;
  h.checksum_offset = offload.checksum_offset;
  char header[io::VirtioNetHeader::kSize];
  io::serialize(h, header);
  device_->send_with_header(header, frame);
}

bool TapPort::unwrap(std::string_view read, std::string_view& frame, net::LinkOffload& offload) {
  offload = {};
  if (!device_->offload()) {
    frame = read;
    return true;
  }
  const auto h = io::parse_virtio_net_header(read);
  if (!h) {
    ++bad_reads_;
    return false;
  }
  offload.flags = h->flags;
  offload.gso_type = h->gso_type;
  offload.header_length = h->header_length;
  offload.gso_size = h->gso_size;
  offload.checksum_start = h->checksum_start;
  offload.checksum_offset = h->checksum_offset;
  frame = read.substr(io::VirtioNetHeader::kSize);
  return true;
}

TapPort::~TapPort() = default;

uint64_t TapPort::impaired_out() const {
  const auto* i = dynamic_cast<const io::ImpairedAdapter*>(impaired_.get());
  return i != nullptr ? i->outbound().stats().drops.total() : 0;
}

}  // namespace tinytcp::apps

#include "tinyrouter/tap_port.hh"

#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "io/impaired_adapter.hh"
#include "io/pcap_capture.hh"
#include "io/system_clock.hh"

namespace tinytcp::apps {

TapPort::TapPort(const std::string& name, const std::optional<io::ImpairmentConfig>& impairment,
                 const std::string& pcap, uint64_t seed)
    : name_(name) {
  try {
    device_ = std::make_unique<io::TapDevice>(name);
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

TapPort::~TapPort() = default;

uint64_t TapPort::impaired_out() const {
  const auto* i = dynamic_cast<const io::ImpairedAdapter*>(impaired_.get());
  return i != nullptr ? i->outbound().stats().drops.total() : 0;
}

}  // namespace tinytcp::apps

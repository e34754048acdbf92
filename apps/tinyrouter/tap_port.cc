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
  if (impairment) {
    impaired_ = std::make_unique<io::ImpairedAdapter>(*top_, io::SystemClock::instance(),
                                                      *impairment, *impairment, seed);
    top_ = impaired_.get();
  }
}

TapPort::~TapPort() = default;

uint64_t TapPort::impaired_out() const {
  const auto* i = dynamic_cast<const io::ImpairedAdapter*>(impaired_.get());
  return i != nullptr ? i->outbound().stats().drops.total() : 0;
}

uint64_t TapPort::impaired_in() const {
  const auto* i = dynamic_cast<const io::ImpairedAdapter*>(impaired_.get());
  return i != nullptr ? i->inbound().stats().drops.total() : 0;
}

}  // namespace tinytcp::apps

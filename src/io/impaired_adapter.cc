#include "io/impaired_adapter.hh"

#include <algorithm>

namespace tinytcp::io {

ImpairedAdapter::ImpairedAdapter(DatagramAdapter& inner, const Clock& clock,
                                 const ImpairmentConfig& outbound, const ImpairmentConfig& inbound,
                                 uint64_t seed)
    : inner_(inner), clock_(clock), outbound_(outbound, seed + 1), inbound_(inbound, seed) {}

size_t ImpairedAdapter::receive_batch(const PacketHandler& on_packet, size_t max_packets) {
  // Take what the link has into the inbound model at the time it arrived...
  const Instant arrived = clock_.now();
  inner_.receive_batch([&](std::string_view packet) { inbound_.push(packet, arrived); },
                       max_packets);
  // ...then hand up whatever is due, and send what the outbound side holds.
  const Instant now = clock_.now();
  const size_t handed_up = inbound_.release(now, on_packet);
  release_outbound(now);
  return handed_up;
}

void ImpairedAdapter::send(std::string_view packet) {
  const Instant now = clock_.now();
  outbound_.push(packet, now);
  release_outbound(now);
}

void ImpairedAdapter::send_batch(const std::string_view* packets, size_t count) {
  const Instant now = clock_.now();
  for (size_t i = 0; i < count; ++i) {
    outbound_.push(packets[i], now);
  }
  release_outbound(now);
}

void ImpairedAdapter::release_outbound(Instant now) {
  outgoing_.clear();
  if (outbound_.release_into(now, outgoing_) > 0) {
    // The views stay valid: nothing is pushed into outbound_ until this returns.
    inner_.send_batch(outgoing_.data(), outgoing_.size());
  }
}

std::optional<Instant> ImpairedAdapter::next_deadline() const {
  std::optional<Instant> earliest = inner_.next_deadline();
  for (const auto& due : {outbound_.next_deadline(), inbound_.next_deadline()}) {
    if (due && (!earliest || *due < *earliest)) {
      earliest = due;
    }
  }
  return earliest;
}

}  // namespace tinytcp::io

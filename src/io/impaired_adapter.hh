#pragma once

// Wraps any adapter in an impairment stage, one ImpairmentModel per direction
// (outbound: what the stack sends; inbound: what the link delivers), each with
// its own configuration and seed. It is an adapter itself, so it stacks with
// PcapCapture: capture outside the impairment to see what really crossed the
// link, inside it to see what the stack sent and received.
//
// Held packets make it timed: next_deadline() reports the earliest release
// and receive_batch() (called by the event loop when the fd is readable or
// that deadline passes) releases both directions. Time comes from a Clock, so
// tests drive it with a ManualClock.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "io/adapter.hh"
#include "io/clock.hh"
#include "io/impairment.hh"

namespace tinytcp::io {

class ImpairedAdapter : public DatagramAdapter {
 public:
  // `inner` and `clock` must outlive this adapter. The inbound model gets seed
  // `seed`, the outbound one `seed + 1`, so one number replays both.
  ImpairedAdapter(DatagramAdapter& inner, const Clock& clock, const ImpairmentConfig& outbound,
                  const ImpairmentConfig& inbound, uint64_t seed);

  size_t receive_batch(const PacketHandler& on_packet, size_t max_packets) override;
  using DatagramAdapter::receive_batch;
  void send(std::string_view packet) override;
  // Pushes all, then hands what is due to the inner adapter as one batch (so a
  // UdpTunnel underneath still segments).
  void send_batch(const std::string_view* packets, size_t count) override;

  int fd() const override { return inner_.fd(); }
  LinkType link_type() const override { return inner_.link_type(); }
  size_t mtu() const override { return inner_.mtu(); }
  void set_send_failure_handler(SendFailureHandler handler) override {
    inner_.set_send_failure_handler(std::move(handler));
  }
  // The inner adapter's counters (what really crossed the link); impairment
  // drops are in outbound()/inbound() stats.
  const AdapterStats& stats() const override { return inner_.stats(); }
  std::optional<Instant> next_deadline() const override;

  const ImpairmentModel& outbound() const { return outbound_; }
  const ImpairmentModel& inbound() const { return inbound_; }

 private:
  void release_outbound(Instant now);

  DatagramAdapter& inner_;
  const Clock& clock_;
  ImpairmentModel outbound_;
  ImpairmentModel inbound_;
  std::vector<std::string_view> outgoing_;  // reused batch of released packets
};

}  // namespace tinytcp::io

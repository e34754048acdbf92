#pragma once

// An in-memory adapter for tests: packets queued with deliver() come out of
// receive_batch(); packets sent are recorded.

#include <deque>
#include <string>
#include <vector>

#include "io/adapter.hh"

namespace tinytcp::io::testing {

class FakeAdapter : public DatagramAdapter {
 public:
  explicit FakeAdapter(LinkType type = LinkType::kRawIp) : type_(type) {}

  void deliver(std::string packet) { incoming_.push_back(std::move(packet)); }

  size_t receive_batch(const PacketHandler& on_packet, size_t max_packets) override {
    size_t n = 0;
    while (n < max_packets && !incoming_.empty()) {
      const std::string packet = std::move(incoming_.front());
      incoming_.pop_front();
      ++stats_.packets_received;
      stats_.bytes_received += packet.size();
      on_packet(packet);
      ++n;
    }
    return n;
  }
  using DatagramAdapter::receive_batch;
  void send(std::string_view packet) override {
    if (refuse) {
      // As a full device queue: counted as a drop and handed back.
      ++stats_.send_drops;
      report_send_failure(packet);
      return;
    }
    ++stats_.packets_sent;
    stats_.bytes_sent += packet.size();
    sent.emplace_back(packet);
  }
  int fd() const override { return -1; }
  LinkType link_type() const override { return type_; }
  size_t mtu() const override { return 1500; }
  const AdapterStats& stats() const override { return stats_; }

  std::vector<std::string> sent;
  bool refuse = false;  // every send fails for want of buffers

 private:
  LinkType type_;
  std::deque<std::string> incoming_;
  AdapterStats stats_;
};

}  // namespace tinytcp::io::testing

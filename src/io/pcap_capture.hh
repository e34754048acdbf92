#pragma once

// Wraps any adapter and writes every packet it receives and sends to a pcap
// file (PcapWriter), with the adapter's link type, so `tcpdump -r` and
// `tshark -r` show the traffic. Wrapping the impairment stage records what the
// stack saw; being wrapped by it records what crossed the real link.
//
//   TunDevice tun("tun144");
//   PcapCapture capture(tun, "tun144.pcap");
//   loop.add_adapter(capture, deliver_to_host);

#include <string>

#include "io/adapter.hh"
#include "io/pcap_writer.hh"

namespace tinytcp::io {

class PcapCapture : public DatagramAdapter {
 public:
  // `inner` must outlive the capture. Throws std::system_error if `path`
  // cannot be created.
  PcapCapture(DatagramAdapter& inner, const std::string& path,
              size_t snaplen = PcapWriter::kDefaultSnaplen);

  size_t receive_batch(const PacketHandler& on_packet, size_t max_packets) override;
  using DatagramAdapter::receive_batch;
  void send(std::string_view packet) override;
  void send_batch(const std::string_view* packets, size_t count) override;

  int fd() const override { return inner_.fd(); }
  LinkType link_type() const override { return inner_.link_type(); }
  size_t mtu() const override { return inner_.mtu(); }
  void set_send_failure_handler(SendFailureHandler handler) override {
    inner_.set_send_failure_handler(std::move(handler));
  }
  const AdapterStats& stats() const override { return inner_.stats(); }
  std::optional<Instant> next_deadline() const override { return inner_.next_deadline(); }

  PcapWriter& writer() { return writer_; }

 private:
  DatagramAdapter& inner_;
  PcapWriter writer_;
};

}  // namespace tinytcp::io

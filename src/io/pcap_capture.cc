#include "io/pcap_capture.hh"

namespace tinytcp::io {

PcapCapture::PcapCapture(DatagramAdapter& inner, const std::string& path, size_t snaplen)
    : inner_(inner), writer_(path, inner.link_type(), snaplen) {}

size_t PcapCapture::receive_batch(const PacketHandler& on_packet, size_t max_packets) {
  return inner_.receive_batch(
      [&](std::string_view packet) {
        writer_.write(packet);
        on_packet(packet);
      },
      max_packets);
}

void PcapCapture::send(std::string_view packet) {
  writer_.write(packet);
  inner_.send(packet);
}

void PcapCapture::send_batch(const std::string_view* packets, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    writer_.write(packets[i]);
  }
  inner_.send_batch(packets, count);
}

}  // namespace tinytcp::io

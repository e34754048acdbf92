#pragma once

// Shared pieces of the net/ tests: recording sinks and frame builders.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "net/datagram_sink.hh"
#include "net/frame_sink.hh"
#include "util/buffer.hh"
#include "util/time.hh"
#include "wire/arp.hh"
#include "wire/ethernet.hh"
#include "wire/ipv4.hh"

namespace tinytcp::net::test {

class RecordingFrameSink : public FrameSink {
 public:
  void send_frame(std::string_view frame) override { frames.emplace_back(frame); }
  std::vector<std::string> frames;
};

class RecordingDatagramSink : public DatagramSink {
 public:
  struct Received {
    std::string datagram;
    size_t interface_index;
    Instant when;
    bool link_multicast;
  };
  void on_datagram(std::string_view datagram, size_t interface_index, Instant now,
                   bool link_multicast) override {
    datagrams.push_back({std::string(datagram), interface_index, now, link_multicast});
  }
  std::vector<Received> datagrams;
};

inline std::string ethernet_frame(const wire::MacAddress& dst, const wire::MacAddress& src,
                                  wire::EtherType type, std::string_view payload) {
  std::string out(wire::EthernetHeader::kSize + payload.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(wire::EthernetHeader{dst, src, static_cast<uint16_t>(type)}, w);
  w.bytes(payload);
  return out;
}

inline std::string arp_payload(const wire::ArpMessage& m) {
  std::string out(wire::ArpMessage::kSize, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(m, w);
  return out;
}

// A valid IPv4 datagram with `payload_size` bytes of payload.
inline std::string ipv4_datagram(wire::Ipv4Address src, wire::Ipv4Address dst, uint8_t ttl = 64,
                                 size_t payload_size = 16, uint8_t protocol = 17, uint16_t id = 1) {
  std::string out(wire::Ipv4Header::kMinSize + payload_size, '\0');
  wire::Ipv4Header h;
  h.total_length = static_cast<uint16_t>(out.size());
  h.id = id;
  h.ttl = ttl;
  h.protocol = protocol;
  h.src = src;
  h.dst = dst;
  BufferWriter w(out.data(), out.size());
  serialize(h, w);
  for (size_t i = 0; i < payload_size; ++i) {
    w.u8(static_cast<uint8_t>('a' + i % 26));
  }
  return out;
}

inline wire::Ipv4Address ip(const char* text) {
  return *wire::Ipv4Address::parse(text);
}

}  // namespace tinytcp::net::test

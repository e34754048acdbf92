#pragma once

// TSO on the way out of a TUN device opened with IFF_VNET_HDR: in a batch of
// outgoing IPv4 or IPv6 datagrams, a run of back-to-back TCP segments of one flow
// (same addresses, ports, ACK, window and options; contiguous sequence
// numbers; every payload but the last of the first one's size) is written
// as one super-packet of up to 64 KiB with a virtio-net header saying
// "TCPv4 (or TCPv6) GSO, segment size N, checksum to complete". The kernel takes it as
// if a NIC had coalesced the segments (GRO): one write and one trip through
// its stack instead of one per segment, and it segments again only if the
// packet is forwarded. The segments the Host produced are not changed, only
// their headers are merged; anything else (SYN, FIN, RST, URG, ECN bits, IP
// options, IPv6 extension headers, a short segment in the middle) is sent
// alone. A run holds one family (the flow's).
//
// Pure functions over bytes, tested without a device; KernelDevice uses them.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/virtio_net_header.hh"

namespace tinytcp::io {

struct TsoRun {
  size_t count = 1;              // datagrams in the run; 1: send the first alone
  size_t ip_header_bytes = 0;    // 20 (IPv4) or 40 (IPv6)
  size_t header_bytes = 0;       // IP + TCP header bytes, the same in each
  size_t payload_bytes = 0;      // the payloads together
  uint16_t segment_payload = 0;  // gso_size: the first payload's size
};

// The longest run at the front of `datagrams[0, count)` whose super-packet is
// at most `max_bytes` long (IPv4 total length; IPv6: the 40-byte header
// with its payload). count >= 1.
TsoRun find_tso_run(const std::string_view* datagrams, size_t count, size_t max_bytes = 65535);

// The bytes in front of the payloads of a run of two or more: the virtio-net
// header, then the first datagram's IP and TCP headers with the total
// length and IPv4 checksum (IPv6: the payload length), PSH (if any segment
// had it) and the TCP checksum field (the pseudo-header sum, to be
// completed) of the super-packet.
// Writes kTsoHeaderBytes(run) = VirtioNetHeader::kSize + run.header_bytes.
size_t write_tso_header(const std::string_view* datagrams, const TsoRun& run, char* out);

constexpr size_t tso_header_bytes(const TsoRun& run) {
  return VirtioNetHeader::kSize + run.header_bytes;
}

}  // namespace tinytcp::io

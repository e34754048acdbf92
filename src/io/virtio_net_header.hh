#pragma once

// The virtio-net header that a TUN device opened with IFF_VNET_HDR puts in
// front of every packet (include/uapi/linux/virtio_net.h, struct
// virtio_net_hdr; virtio spec 1.1 §5.1.6). It carries the two offloads we use:
//
//   - checksum offload (flags & kNeedsChecksum): the checksum field at
//     csum_start + csum_offset holds only the pseudo-header sum; the sum over
//     [csum_start, end) completes it. The kernel hands us such packets; we
//     hand it TSO super-packets this way.
//   - segmentation offload (gso_type kGsoTcpV4 or kGsoTcpV6): one IPv4/TCP or
//     IPv6/TCP packet of up to 64 KiB standing for segments of gso_size
//     payload bytes each.
//
//    0       1       2       4       6       8      10
//   +-------+-------+-------+-------+-------+-------+
//   | flags |gso_typ|hdr_len|gso_sz |cs_strt|cs_off |
//   +-------+-------+-------+-------+-------+-------+
//
// The 16-bit fields are little-endian: KernelDevice sets TUNSETVNETLE, so
// this holds on every host.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tinytcp::io {

struct VirtioNetHeader {
  static constexpr size_t kSize = 10;
  static constexpr uint8_t kNeedsChecksum = 1;  // VIRTIO_NET_HDR_F_NEEDS_CSUM
  static constexpr uint8_t kDataValid = 2;      // VIRTIO_NET_HDR_F_DATA_VALID
  static constexpr uint8_t kGsoNone = 0;        // VIRTIO_NET_HDR_GSO_NONE
  static constexpr uint8_t kGsoTcpV4 = 1;       // VIRTIO_NET_HDR_GSO_TCPV4
  static constexpr uint8_t kGsoTcpV6 = 4;       // VIRTIO_NET_HDR_GSO_TCPV6
  static constexpr uint8_t kGsoEcn = 0x80;      // VIRTIO_NET_HDR_GSO_ECN (a flag bit)

  uint8_t flags = 0;
  uint8_t gso_type = kGsoNone;
  uint16_t header_length = 0;  // bytes of headers in front of the payload (a hint)
  uint16_t gso_size = 0;       // payload bytes per segment
  uint16_t checksum_start = 0;
  uint16_t checksum_offset = 0;
};

// nullopt when `bytes` is shorter than kSize.
std::optional<VirtioNetHeader> parse_virtio_net_header(std::string_view bytes);
// Writes kSize bytes.
void serialize(const VirtioNetHeader& header, char* out);

// For a packet with kNeedsChecksum: sums [checksum_start, end), which
// includes the pseudo-header sum already in the field, and stores the
// checksum in the field (0xffff for a zero result, valid for TCP and UDP
// alike, RFC 768). False, packet untouched, when the field lies outside it.
bool complete_checksum(char* packet, size_t size, const VirtioNetHeader& header);

// What a read from a device with IFF_VNET_HDR held, after take_virtio_net_header.
enum class VnetRead : uint8_t {
  kPacket,          // a packet (or GSO super-packet) whose checksum is complete
  kBadHeader,       // shorter than the header, or its checksum field outside the packet
  kUnsupportedGso,  // a GSO type other than TCPv4 and TCPv6 (UDP, never offered)
};
struct VnetReadInfo {
  VnetRead result = VnetRead::kBadHeader;
  bool checksum_completed = false;  // kNeedsChecksum was set and is now done
  bool super_packet = false;        // GSO TCPv4 or TCPv6
};
// Checks the virtio-net header at the front of `read` (`size` bytes) and
// completes the packet's checksum in place when the kernel left it partial:
// for IPv4 and IPv6 alike, since the field holds the family's pseudo-header
// sum. On kPacket the packet is read[kSize, size).
VnetReadInfo take_virtio_net_header(char* read, size_t size);

}  // namespace tinytcp::io

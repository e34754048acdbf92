#pragma once

// LinkOffload: what travels with a frame to or from a device that offloads
// checksums and TCP segmentation: the fields of the virtio-net header of a TAP
// device opened with IFF_VNET_HDR (io/virtio_net_header.hh has the layout),
// sans-I/O. Offsets count from the start of the frame (the Ethernet header),
// as the device's do, so a frame forwarded from one such device to another
// keeps its header unchanged.
//
//   - kNeedsChecksum: the checksum field at checksum_start + checksum_offset
//     holds the pseudo-header sum only; summing [checksum_start, end)
//     completes it.
//   - gso_type kGsoTcpV4: one IPv4/TCP datagram of up to 64 KiB standing for
//     segments of gso_size payload bytes each (the kernel's GSO super-packet).
//
// The Router checks what it is handed (check_ipv4_offload: bad headers are
// dropped and counted), forwards it with its header to an interface that
// offloads too, and otherwise completes the checksum or segments in software
// (TcpSegmenter).

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace tinytcp::net {

// The largest datagram a GSO super-frame holds (IPv4 total length).
constexpr size_t kMaxOffloadDatagram = 65535;

struct LinkOffload {
  static constexpr uint8_t kNeedsChecksum = 1;  // VIRTIO_NET_HDR_F_NEEDS_CSUM
  static constexpr uint8_t kGsoNone = 0;
  static constexpr uint8_t kGsoTcpV4 = 1;
  static constexpr uint8_t kGsoTcpV6 = 4;
  static constexpr uint8_t kGsoEcn = 0x80;  // a flag bit of gso_type

  uint8_t flags = 0;
  uint8_t gso_type = kGsoNone;
  uint16_t header_length = 0;  // a hint: bytes in front of the payload
  uint16_t gso_size = 0;       // payload bytes per segment
  uint16_t checksum_start = 0;
  uint16_t checksum_offset = 0;

  bool needs_checksum() const { return (flags & kNeedsChecksum) != 0; }
  bool gso() const { return gso_type != kGsoNone; }
  // Anything to act on (a header of zeros, or DATA_VALID alone, is a plain frame).
  bool active() const { return needs_checksum() || gso(); }
};

// Why a LinkOffload was not usable (the frame is dropped, never forwarded).
enum class OffloadError {
  kChecksumOutside,     // the checksum field is not inside the datagram, after its IP header
  kUnknownGso,          // a GSO type other than TCPv4 (an IPv4 router), or ECN
  kZeroGsoSize,         // GSO with gso_size 0
  kNotTcp,              // GSO of a datagram that is no unfragmented TCP with a whole header
  kGsoWithoutChecksum,  // GSO without kNeedsChecksum, or not at the TCP checksum
  kCount
};
const char* to_string(OffloadError e);

// For an IPv4 datagram (its header already verified) that starts
// `link_bytes` into its frame: nullopt when `offload` fits it.
std::optional<OffloadError> check_ipv4_offload(const LinkOffload& offload,
                                               std::string_view datagram, size_t link_bytes);

// IP + TCP header bytes of a datagram check_ipv4_offload accepted with GSO:
// what each segment carries in front of its gso_size payload bytes.
size_t gso_header_bytes(std::string_view datagram);

// Completes a checksum check_ipv4_offload accepted, in place.
void complete_checksum(char* datagram, size_t size, const LinkOffload& offload, size_t link_bytes);

// Software segmentation of an accepted TCPv4 GSO datagram: segments of
// gso_size payload bytes (the last may be shorter) with the IP header's
// total length, identification (+1 per segment, as Linux does) and checksum,
// the sequence number, flags (FIN and PSH on the last only, CWR on the first
// only) and a complete TCP checksum. Allocates nothing after construction.
class TcpSegmenter {
 public:
  using Emit = std::function<void(std::string_view head, std::string_view payload)>;
  // `ip_header`: the datagram's IPv4 header as it should leave (TTL already
  // decremented); `rest`: its TCP header and payload. Returns the segments.
  size_t segment(std::string_view ip_header, std::string_view rest, uint16_t gso_size,
                 const Emit& emit);

 private:
  std::array<char, 60 + 60> head_{};  // IPv4 header + TCP header, both at most 60
};

}  // namespace tinytcp::net

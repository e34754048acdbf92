#include "tcp/isn.hh"

#include <chrono>

#include "util/buffer.hh"
#include "util/hash.hh"

namespace tinytcp::tcp {

uint32_t IsnGenerator::timer(Instant now) {
  // RFC 6528 §3: M is a 4-microsecond timer (it wraps every ~4.77 hours).
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.since_epoch()).count();
  return static_cast<uint32_t>(static_cast<uint64_t>(us) / 4);
}

uint32_t IsnGenerator::hash(uint32_t local_ip, uint16_t local_port, uint32_t remote_ip,
                            uint16_t remote_port) const {
  char tuple[12];
  BufferWriter out(tuple, sizeof(tuple));
  out.u32(local_ip);
  out.u16(local_port);
  out.u32(remote_ip);
  out.u16(remote_port);
  const Sha256Digest digest = hmac_sha256(key_, out.written());
  return (uint32_t{digest[0]} << 24) | (uint32_t{digest[1]} << 16) | (uint32_t{digest[2]} << 8) |
         uint32_t{digest[3]};
}

uint32_t IsnGenerator::timestamp_offset(uint32_t local_ip, uint32_t remote_ip) const {
  // 9 bytes: never the 12-byte input of an ISN hash.
  char pair[9];
  BufferWriter out(pair, sizeof(pair));
  out.u8('T');
  out.u32(local_ip);
  out.u32(remote_ip);
  const Sha256Digest digest = hmac_sha256(key_, out.written());
  return (uint32_t{digest[0]} << 24) | (uint32_t{digest[1]} << 16) | (uint32_t{digest[2]} << 8) |
         uint32_t{digest[3]};
}

Wrap32 IsnGenerator::generate(uint32_t local_ip, uint16_t local_port, uint32_t remote_ip,
                              uint16_t remote_port, Instant now) const {
  return Wrap32{timer(now) + hash(local_ip, local_port, remote_ip, remote_port)};
}

}  // namespace tinytcp::tcp

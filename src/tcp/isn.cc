#include "tcp/isn.hh"

#include <algorithm>
#include <chrono>

#include "util/buffer.hh"
#include "util/hash.hh"

namespace tinytcp::tcp {
namespace {

SipHash::Key derive_key(const std::string& secret) {
  const Sha256Digest digest = sha256(secret);
  SipHash::Key key{};
  std::copy_n(digest.begin(), key.size(), key.begin());
  return key;
}

}  // namespace

IsnGenerator::IsnGenerator(const std::string& secret_key) : hash_(derive_key(secret_key)) {}

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
  return static_cast<uint32_t>(hash_(out.written()));
}

uint32_t IsnGenerator::timestamp_offset(uint32_t local_ip, uint32_t remote_ip) const {
  // 9 bytes: never the 12-byte input of an ISN hash.
  char pair[9];
  BufferWriter out(pair, sizeof(pair));
  out.u8('T');
  out.u32(local_ip);
  out.u32(remote_ip);
  return static_cast<uint32_t>(hash_(out.written()));
}

Wrap32 IsnGenerator::generate(uint32_t local_ip, uint16_t local_port, uint32_t remote_ip,
                              uint16_t remote_port, Instant now) const {
  return Wrap32{timer(now) + hash(local_ip, local_port, remote_ip, remote_port)};
}

}  // namespace tinytcp::tcp

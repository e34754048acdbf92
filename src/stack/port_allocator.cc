#include "stack/port_allocator.hh"

#include "util/buffer.hh"
#include "util/check.hh"
#include "util/hash.hh"

namespace tinytcp::stack {

PortAllocator::PortAllocator(std::string secret, uint16_t min_port, uint16_t max_port)
    : secret_(std::move(secret)), min_(min_port), max_(max_port) {
  TINYTCP_CHECK(min_port > 0 && min_port <= max_port);
}

namespace {

// An IPv4 address as before IPv6 (4 bytes, so its ports stay the same); an
// IPv6 one as its 16 bytes.
void write_address(BufferWriter& w, const IpAddress& a) {
  if (a.is_v4()) {
    w.u32(a.v4().value);
    return;
  }
  for (const uint32_t word : a.words()) {
    w.u32(word);
  }
}

}  // namespace

uint32_t PortAllocator::keyed_hash(std::string_view tag, const IpAddress& local_ip,
                                   const IpAddress& remote_ip, uint16_t remote_port) const {
  char buf[40];
  BufferWriter w(buf, sizeof buf);
  w.bytes(tag.substr(0, 2));
  write_address(w, local_ip);
  write_address(w, remote_ip);
  w.u16(remote_port);
  const auto digest = hmac_sha256(secret_, w.written());
  return (uint32_t{digest[0]} << 24) | (uint32_t{digest[1]} << 16) | (uint32_t{digest[2]} << 8) |
         digest[3];
}

std::optional<uint16_t> PortAllocator::allocate(const IpAddress& local_ip,
                                                const IpAddress& remote_ip, uint16_t remote_port,
                                                const std::function<bool(uint16_t)>& in_use) {
  // RFC 6056 §3.3.4: offset = F(local, remote, secret1); index = G(..., secret2);
  // candidate = min + (offset + table[index] + i) % num_ephemeral.
  const uint32_t num = uint32_t{max_} - min_ + 1;
  const uint32_t offset = keyed_hash("F:", local_ip, remote_ip, remote_port);
  const size_t index = keyed_hash("G:", local_ip, remote_ip, remote_port) % kTableSize;
  for (uint32_t i = 0; i < num; ++i) {
    const auto port = static_cast<uint16_t>(min_ + (offset + table_[index] + i) % num);
    if (!in_use(port)) {
      // RFC 6056 §3.3.4: table[index] = table[index] + count, so the next
      // search for this bucket starts past the port just chosen.
      table_[index] = static_cast<uint16_t>(table_[index] + i + 1);
      return port;
    }
  }
  return std::nullopt;
}

}  // namespace tinytcp::stack

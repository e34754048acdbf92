#pragma once

// PortAllocator: ephemeral ports for active opens, RFC 6056 §3.3.4
// (Algorithm 4, "double-hash port selection"): the search for a free port
// starts at an offset given by a keyed hash of the remote endpoint plus a
// per-bucket counter, so ports are unpredictable to an off-path attacker yet
// rarely reused for the same peer. The caller says which ports are taken.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "stack/ip_address.hh"

namespace tinytcp::stack {

class PortAllocator {
 public:
  static constexpr uint16_t kDefaultMin = 49152;  // RFC 6056 §2.1 (IANA dynamic range)
  static constexpr uint16_t kDefaultMax = 65535;
  static constexpr size_t kTableSize = 256;  // RFC 6056 §3.3.4 table of counters

  // `secret`: at least 16 random bytes (util's secure_random_bytes).
  PortAllocator(std::string secret, uint16_t min_port = kDefaultMin,
                uint16_t max_port = kDefaultMax);

  // A local port for a connection to remote_ip:remote_port from local_ip, the
  // first for which `in_use(port)` is false; nullopt when every port is taken.
  std::optional<uint16_t> allocate(const IpAddress& local_ip, const IpAddress& remote_ip,
                                   uint16_t remote_port,
                                   const std::function<bool(uint16_t)>& in_use);

 private:
  uint32_t keyed_hash(std::string_view tag, const IpAddress& local_ip, const IpAddress& remote_ip,
                      uint16_t remote_port) const;

  std::string secret_;
  uint16_t min_;
  uint16_t max_;
  std::array<uint16_t, kTableSize> table_{};
};

}  // namespace tinytcp::stack

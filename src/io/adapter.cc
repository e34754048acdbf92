#include "io/adapter.hh"

namespace tinytcp::io {

const char* to_string(LinkType type) {
  switch (type) {
    case LinkType::kEthernet:
      return "ethernet";
    case LinkType::kRawIp:
      return "raw-ip";
  }
  return "unknown";
}

}  // namespace tinytcp::io

#include "tt-tunnel/tunnel_options.hh"

#include <fmt/format.h>

namespace tinytcp::apps {

nlohmann::json TunnelStats::to_json() const {
  return nlohmann::json{{"accepted", accepted}, {"refused", refused},   {"finished", finished},
                        {"broken", broken},     {"bytes_up", bytes_up}, {"bytes_down", bytes_down}};
}

std::string TunnelStats::to_line() const {
  return fmt::format("connections {} (refused {}, finished {}, broken {}), {} bytes up, {} down",
                     accepted, refused, finished, broken, bytes_up, bytes_down);
}

}  // namespace tinytcp::apps

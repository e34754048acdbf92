#include "tt-tunnel/tunnel_options.hh"

#include <fmt/format.h>

namespace tinytcp::apps {

session::SessionConfig tunnel_session_config(const TunnelOptions& options) {
  session::SessionConfig config;
  config.psk = options.psk;
  config.give_up = options.give_up;
  config.max_sessions = options.max_connections;
  return config;
}

nlohmann::json TunnelStats::to_json() const {
  return nlohmann::json{
      {"accepted", accepted}, {"refused", refused},       {"finished", finished},
      {"broken", broken},     {"carriers", carriers},     {"carriers_lost", carriers_lost},
      {"bytes_up", bytes_up}, {"bytes_down", bytes_down}, {"resumes", resumes}};
}

std::string TunnelStats::to_line() const {
  return fmt::format(
      "connections {} (refused {}, finished {}, broken {}), carriers {} (lost {}), resumes {}, "
      "{} bytes up, {} down",
      accepted, refused, finished, broken, carriers, carriers_lost, resumes, bytes_up, bytes_down);
}

}  // namespace tinytcp::apps

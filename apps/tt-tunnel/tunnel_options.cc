#include "tt-tunnel/tunnel_options.hh"

#include <utility>

#include <fmt/format.h>

namespace tinytcp::apps {

namespace {

void add_session(nlohmann::json& j, const session::SessionStats& s) {
  j["replayed_bytes"] = s.bytes_replayed;
  j["resumes"] = s.resumes;
  j["carriers_lost"] = s.carriers_lost;
  j["aborts_sent"] = s.aborts_sent;
  j["aborts_received"] = s.aborts_received;
}

}  // namespace

void TunnelStats::record(ConnectionRecord connection) {
  if (connection.end == "finished") {
    ++finished;
  } else if (connection.end == "broken") {
    ++broken;
  }
  bytes_up += connection.bytes_up;
  bytes_down += connection.bytes_down;
  if (const auto& s = connection.session) {
    replayed_bytes += s->bytes_replayed;
    resumes += s->resumes;
    carriers_lost += s->carriers_lost;
    aborts_sent += s->aborts_sent;
    aborts_received += s->aborts_received;
  }
  connections.push_back(std::move(connection));
  if (connections.size() > kMaxListed) {
    connections.pop_front();
    ++unlisted;
  }
}

nlohmann::json TunnelStats::to_json() const {
  nlohmann::json j{{"accepted", accepted},
                   {"refused", refused},
                   {"finished", finished},
                   {"broken", broken},
                   {"bytes_up", bytes_up},
                   {"bytes_down", bytes_down},
                   {"replayed_bytes", replayed_bytes},
                   {"resumes", resumes},
                   {"carriers_lost", carriers_lost},
                   {"aborts_sent", aborts_sent},
                   {"aborts_received", aborts_received},
                   {"connections_unlisted", unlisted}};
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : connections) {
    nlohmann::json one{{"number", c.number},
                       {"end", c.end},
                       {"bytes_up", c.bytes_up},
                       {"bytes_down", c.bytes_down}};
    if (c.session) {
      add_session(one, *c.session);
    }
    list.push_back(std::move(one));
  }
  j["connections"] = std::move(list);
  return j;
}

std::string TunnelStats::to_line() const {
  return fmt::format(
      "connections {} (refused {}, finished {}, broken {}), {} bytes up, {} down; sessions: "
      "{} bytes replayed, {} carriers lost, aborts {} sent {} received",
      accepted, refused, finished, broken, bytes_up, bytes_down, replayed_bytes, carriers_lost,
      aborts_sent, aborts_received);
}

}  // namespace tinytcp::apps

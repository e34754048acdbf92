#pragma once

// A client Session and a SessionAcceptor joined by in-memory carriers on a
// manual clock, for the session layer's unit and sim tests. Each carrier is a
// pair of byte queues; a cut can be an RST (both ends told), a black hole
// (bytes vanish, nobody told) or an address change (the client opens a new
// carrier while the server still holds the old one).

#include <memory>
#include <string>
#include <vector>

#include "session/session.hh"
#include "session/session_acceptor.hh"
#include "util/random.hh"

namespace tinytcp::session::testing {

inline std::function<std::string(size_t)> seeded_random(uint64_t seed) {
  auto rng = std::make_shared<Rng>(seed);
  return [rng](size_t n) { return rng->bytes(n); };
}

inline SessionConfig small_config(uint64_t seed) {
  SessionConfig c;
  c.replay_capacity = 64 * 1024;
  c.receive_capacity = 64 * 1024;
  c.ack_interval = 8 * 1024;
  c.random = seeded_random(seed);
  return c;
}

class SessionPair {
 public:
  using CarrierId = SessionAcceptor::CarrierId;
  using Event = SessionAcceptor::Event;

  SessionPair(SessionConfig client_config, SessionConfig server_config)
      : client(std::move(client_config)), server(std::move(server_config)) {}

  // The client connects a new carrier (the old one, if any, stays open at the
  // server until a resume replaces it: an address change).
  CarrierId connect() {
    ++carrier;
    black_hole = false;
    client.attach_carrier(now);
    server.on_carrier_accepted(carrier, now);
    drain_events();
    return carrier;
  }
  // Both ends see the carrier break.
  void rst() {
    client.carrier_lost(now);
    server.on_carrier_lost(carrier, now);
    drain_events();
  }
  // Moves bytes both ways until neither end has more to say (or a black hole
  // eats them). `max_chunk` bounds each delivery.
  void shuttle(size_t max_chunk = 1 << 20) {
    for (int round = 0; round < 100000; ++round) {
      bool moved = false;
      const auto up = client.carrier_output();
      if (!up.empty() && client.has_carrier() && !client.carrier_failed()) {
        const std::string bytes(up.substr(0, max_chunk));
        client.consume_carrier_output(bytes.size());
        if (!black_hole) {
          server.on_carrier_input(carrier, bytes, now);
          wire_up += bytes;
        }
        moved = true;
      }
      drain_events();
      const auto down = server.carrier_output(carrier);
      if (!down.empty()) {
        const std::string bytes(down.substr(0, max_chunk));
        server.consume_carrier_output(carrier, bytes.size());
        if (!black_hole && client.has_carrier() && !client.carrier_failed()) {
          client.on_carrier_input(bytes, now);
        }
        moved = true;
      }
      drain_events();
      if (!moved) {
        return;
      }
    }
  }
  void advance(Duration d) {
    now += d;
    client.tick(now);
    server.tick(now);
    drain_events();
  }
  void drain_events() {
    while (auto e = server.next_event()) {
      if (e->kind == Event::Kind::SessionOpened || e->kind == Event::Kind::SessionResumed) {
        handle = e->session;
      }
      if (e->kind == Event::Kind::CloseCarrier) {
        closed_carriers.push_back(e->carrier);
        if (e->carrier == carrier && client.has_carrier() && !black_hole) {
          pending_client_loss = true;
        }
      }
      events.push_back(std::move(*e));
    }
    if (pending_client_loss) {
      // The server closed our carrier: the client sees EOF.
      pending_client_loss = false;
      client.carrier_lost(now);
    }
    if (client.carrier_failed()) {
      // The client closes a carrier it gave up on: the server sees EOF.
      client.carrier_lost(now);
      if (!black_hole) {
        server.on_carrier_lost(carrier, now);
      }
    }
  }
  Session* server_session() { return server.session(handle); }
  bool has_event(Event::Kind kind) const {
    for (const auto& e : events) {
      if (e.kind == kind) {
        return true;
      }
    }
    return false;
  }

  Instant now;
  Session client;
  SessionAcceptor server;
  CarrierId carrier = 0;
  SessionAcceptor::SessionHandle handle = 0;
  bool black_hole = false;
  bool pending_client_loss = false;
  std::string wire_up;  // every byte the server received, for replay attacks
  std::vector<Event> events;
  std::vector<CarrierId> closed_carriers;
};

}  // namespace tinytcp::session::testing

#include "stack/peer_hosts.hh"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "stack/datagram_codec.hh"
#include "util/hash.hh"
#include "wire/ipv4.hh"

namespace tinytcp::stack {

namespace {

// How often finished and stale embryonic peers are looked for.
constexpr Duration kSweepInterval = std::chrono::milliseconds(250);

}  // namespace

std::string PeerKey::to_string() const {
  if (address.is_v6()) {
    return fmt::format("[{}]:{}", address.to_string(), port);
  }
  return fmt::format("{}:{}", address.to_string(), port);
}

const char* to_string(PeerDrop d) {
  switch (d) {
    case PeerDrop::BadDatagram:
      return "bad-datagram";
    case PeerDrop::NotForUs:
      return "not-for-us";
    case PeerDrop::NotSyn:
      return "not-syn";
    case PeerDrop::NotListening:
      return "not-listening";
    case PeerDrop::BadCookie:
      return "bad-cookie";
    case PeerDrop::PeersFull:
      return "peers-full";
    case PeerDrop::kCount:
      break;
  }
  return "unknown";
}

struct PeerHosts::Peer {
  PeerId id = 0;
  PeerKey key;
  std::unique_ptr<Host> host;
  std::vector<SocketId> listeners;
  Instant created;
  Instant last_datagram;
  bool embryonic = true;
};

PeerHosts::PeerHosts(PeerHostsConfig config, Output output)
    : config_(std::move(config)), output_(std::move(output)) {
  if (config_.ports.empty()) {
    throw std::invalid_argument("PeerHosts: no listening port");
  }
  if (config_.syn_cookies) {
    gate_secret_ = secure_random_bytes(32);
    HostConfig gate = config_.host;
    gate.secret = gate_secret_;
    gate.syn_cookies = true;
    gate.default_backlog = 0;                     // no SYN queue: every SYN gets a cookie
    gate.max_sockets = config_.ports.size() + 1;  // its listeners and room for none
    gate.max_time_wait = 0;
    gate_ = std::make_unique<Host>(
        gate, [this](std::string_view datagram) { output_(0, gate_peer_, datagram); });
    for (const uint16_t port : config_.ports) {
      if (!gate_->listen(port, 0)) {
        throw std::invalid_argument(fmt::format("PeerHosts: cannot listen on {}", port));
      }
    }
    // As the Host derives its cookie key from its secret.
    cookies_ = std::make_unique<tcp::SynCookies>(gate_secret_ + "cookies");
  }
}

PeerHosts::~PeerHosts() = default;

bool PeerHosts::make_room(bool for_embryonic) {
  while ((for_embryonic && embryonic_count_ >= config_.max_embryonic) ||
         peers_.size() >= config_.max_peers) {
    while (!embryonic_order_.empty()) {
      const auto it = peers_.find(embryonic_order_.front());
      if (it != peers_.end() && it->second->embryonic) {
        break;
      }
      embryonic_order_.pop_front();  // finished or gone since
    }
    if (embryonic_order_.empty()) {
      return false;
    }
    const PeerId victim = embryonic_order_.front();
    embryonic_order_.pop_front();
    ++stats_.embryonic_evicted;
    erase(victim);
  }
  return true;
}

void PeerHosts::on_unknown(const PeerKey& from, std::string_view datagram, Instant now) {
  const auto in = parse_datagram(datagram);
  if (!in) {
    stats_.drops.count(PeerDrop::BadDatagram);
    return;
  }
  if (in->tuple.local_ip != config_.host.address) {
    stats_.drops.count(PeerDrop::NotForUs);
    return;
  }
  const tcp::TcpSegment& seg = in->segment;
  const bool syn = seg.syn && !seg.ack && !seg.rst && !seg.fin;
  const bool ack = seg.ack && !seg.syn && !seg.rst;
  const bool cookies_out = last_cookie_ && now - *last_cookie_ <= 2 * tcp::SynCookies::kPeriod;
  if (!syn && !(ack && cookies_out)) {
    stats_.drops.count(PeerDrop::NotSyn);
    return;
  }
  if (std::find(config_.ports.begin(), config_.ports.end(), in->tuple.local_port) ==
      config_.ports.end()) {
    stats_.drops.count(PeerDrop::NotListening);
    return;
  }
  Peer* peer = nullptr;
  if (syn) {
    const bool room = embryonic_count_ < config_.max_embryonic && peers_.size() < config_.max_peers;
    if (peers_.size() >= config_.max_peers && embryonic_count_ == 0) {
      // Every place is a peer with a completed handshake: a cookie would
      // only lead to an ACK with no room for it.
      stats_.drops.count(PeerDrop::PeersFull);
      return;
    }
    if (!room && gate_) {
      // A flood (or a burst of real peers): answer without keeping anything.
      gate_peer_ = from;
      gate_->receive_datagram(datagram, now);
      ++stats_.cookies_sent;
      last_cookie_ = now;
      return;
    }
    if (!make_room(/*for_embryonic=*/true)) {
      stats_.drops.count(PeerDrop::PeersFull);
      return;
    }
    peer = create(from, {}, now);
  } else {
    const tcp::CookieTuple tuple{in->tuple.local_ip.v4().value, in->tuple.local_port,
                                 in->tuple.remote_ip.v4().value, in->tuple.remote_port};
    if (!cookies_ || !cookies_->rebuild_syn(tuple, seg, now)) {
      stats_.drops.count(PeerDrop::BadCookie);
      return;
    }
    // A completed handshake: embryonic peers make room for it.
    if (!make_room(/*for_embryonic=*/false)) {
      stats_.drops.count(PeerDrop::PeersFull);
      return;
    }
    peer = create(from, gate_secret_, now);
    ++stats_.cookie_peers;
    for (const SocketId listener : peer->listeners) {
      peer->host->expect_cookies(listener, now);
    }
  }
  peer->host->receive_datagram(datagram, now);
  update_embryonic(*peer);
}

PeerHosts::Peer* PeerHosts::create(const PeerKey& from, const std::string& secret, Instant now) {
  auto peer = std::make_unique<Peer>();
  peer->id = next_id_++;
  peer->key = from;
  peer->created = now;
  peer->last_datagram = now;
  const PeerId id = peer->id;
  HostConfig host = config_.host;
  host.secret = secret;  // empty: fresh random bytes of its own
  peer->host = std::make_unique<Host>(
      host, [this, id, from](std::string_view datagram) { output_(id, from, datagram); });
  for (const uint16_t port : config_.ports) {
    const auto listener = peer->host->listen(port, config_.backlog);
    if (!listener) {
      throw std::invalid_argument(
          fmt::format("PeerHosts: listen on {}: {}", port, to_string(listener.error())));
    }
    peer->listeners.push_back(*listener);
  }
  peer->host->set_event_callback([this, id](SocketId socket, SocketEvent event) {
    if (event == SocketEvent::Acceptable) {
      acceptable_.emplace_back(id, socket);
    }
  });
  Peer* raw = peer.get();
  by_key_.emplace(from, id);
  peers_.emplace(id, std::move(peer));
  embryonic_order_.push_back(id);
  ++embryonic_count_;
  ++stats_.peers_created;
  if (!next_sweep_) {
    next_sweep_ = now + kSweepInterval;
  }
  SPDLOG_DEBUG("peers: new peer {} ({})", from.to_string(), id);
  return raw;
}

void PeerHosts::erase(PeerId id) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) {
    return;
  }
  if (it->second->embryonic) {
    --embryonic_count_;
  }
  by_key_.erase(it->second->key);
  peers_.erase(it);
}

void PeerHosts::update_embryonic(Peer& peer) {
  if (peer.embryonic && peer.host->stats().connections_opened > 0) {
    peer.embryonic = false;
    --embryonic_count_;
  }
}

void PeerHosts::receive(const PeerKey& from, std::string_view datagram, Instant now) {
  const auto it = by_key_.find(from);
  if (it == by_key_.end()) {
    on_unknown(from, datagram, now);
    return;
  }
  Peer& peer = *peers_.at(it->second);
  peer.last_datagram = now;
  peer.host->receive_datagram(datagram, now);
  update_embryonic(peer);
}

void PeerHosts::tick(Instant now) {
  for (auto& [id, peer] : peers_) {
    if (const auto due = peer->host->next_deadline(); due && *due <= now) {
      peer->host->tick(now);
      update_embryonic(*peer);
    }
  }
  if (next_sweep_ && *next_sweep_ <= now) {
    sweep(now);
  }
}

void PeerHosts::sweep(Instant now) {
  std::vector<PeerId> gone;
  for (const auto& [id, peer] : peers_) {
    const Host& host = *peer->host;
    if (peer->embryonic) {
      if (now - peer->created >= config_.handshake_timeout) {
        ++stats_.handshake_timeouts;
        gone.push_back(id);
      }
    } else if (host.connection_count() == 0 && host.socket_count() == peer->listeners.size() &&
               now - peer->last_datagram >= config_.linger) {
      ++stats_.peers_finished;
      gone.push_back(id);
    }
  }
  for (const PeerId id : gone) {
    SPDLOG_DEBUG("peers: forget peer {}", id);
    erase(id);
  }
  next_sweep_ = peers_.empty() ? std::nullopt : std::optional<Instant>(now + kSweepInterval);
}

void PeerHosts::on_send_failed(const PeerKey& to, std::string_view datagram, Instant now) {
  const auto it = by_key_.find(to);
  if (it != by_key_.end()) {
    peers_.at(it->second)->host->on_send_failed(datagram, now);
  }
}

std::optional<Instant> PeerHosts::next_deadline() const {
  std::optional<Instant> next = next_sweep_;
  for (const auto& [id, peer] : peers_) {
    if (const auto due = peer->host->next_deadline(); due && (!next || *due < *next)) {
      next = due;
    }
  }
  return next;
}

std::optional<PeerHosts::Accepted> PeerHosts::accept() {
  while (!acceptable_.empty()) {
    const auto [id, listener] = acceptable_.front();
    const auto it = peers_.find(id);
    if (it == peers_.end()) {
      acceptable_.pop_front();
      continue;
    }
    if (const auto socket = it->second->host->accept(listener)) {
      return Accepted{id, it->second->key, *socket};  // more may wait: keep the entry
    }
    acceptable_.pop_front();
  }
  return std::nullopt;
}

Host* PeerHosts::host(PeerId peer) {
  const auto it = peers_.find(peer);
  return it == peers_.end() ? nullptr : it->second->host.get();
}

}  // namespace tinytcp::stack

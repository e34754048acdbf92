#include "session/session_acceptor.hh"

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "session/session_messages.hh"

namespace tinytcp::session {

namespace {

// version, flags, session id, secret, client nonce, limit
constexpr size_t kHelloBytes = 2 + kSessionIdBytes + kSecretBytes + kNonceBytes + 8;

}  // namespace

SessionAcceptor::SessionAcceptor(SessionConfig config) : config_(std::move(config)) {}

void SessionAcceptor::on_carrier_accepted(CarrierId carrier, Instant now) {
  now_ = std::max(now_, now);
  ++stats_.carriers_accepted;
  if (pending_.size() >= config_.max_pending_carriers) {
    stats_.drops.count(AcceptorDrop::PendingFull);
    events_.push_back({Event::Kind::CloseCarrier, 0, carrier, "too many carriers handshaking"});
    return;
  }
  Pending p;
  p.auth = config_.psk ? ControlAuth(*config_.psk, false) : ControlAuth();
  p.accepted_at = now;
  pending_.insert_or_assign(carrier, std::move(p));
}

void SessionAcceptor::on_carrier_input(CarrierId carrier, std::string_view bytes, Instant now) {
  now_ = std::max(now_, now);
  if (const auto b = bound_.find(carrier); b != bound_.end()) {
    const SessionHandle handle = b->second;
    sessions_.at(handle).session->on_carrier_input(bytes, now);
    check_session(handle, now);
    return;
  }
  const auto it = pending_.find(carrier);
  if (it == pending_.end() || it->second.stage == Pending::Stage::Refused) {
    return;
  }
  Pending& p = it->second;
  const auto result = p.decoder.feed(
      bytes, [&](const FrameView& f) { return on_pending_frame(carrier, p, f, now); });
  if (result.error && p.stage != Pending::Stage::Refused) {
    drop_pending(carrier, *result.error == FrameError::Oversized ? AcceptorDrop::OversizedFrame
                                                                 : AcceptorDrop::BadFrame);
  }
  if (const auto b = bound_.find(carrier); b != bound_.end()) {
    // Handshake done: the pending state goes, the rest of the input is the session's.
    pending_.erase(it);
    const SessionHandle handle = b->second;
    if (!result.rest.empty()) {
      sessions_.at(handle).session->on_carrier_input(result.rest, now);
    }
    check_session(handle, now);
  }
}

bool SessionAcceptor::on_pending_frame(CarrierId carrier, Pending& p, const FrameView& frame,
                                       Instant now) {
  if (frame.type == FrameType::Data) {
    drop_pending(carrier, AcceptorDrop::UnexpectedFrame);
    return false;
  }
  if (!config_.psk && frame.type == FrameType::Hello &&
      frame.body.size() == kHelloBytes + kMacBytes) {
    // A client with a key, a server without: tell it plainly.
    refuse(carrier, p, RefuseReason::BadMac, AcceptorDrop::BadMac);
    return false;
  }
  const auto body = p.auth.open(frame.type, frame.body);
  if (!body) {
    refuse(carrier, p, RefuseReason::BadMac, AcceptorDrop::BadMac);
    return false;
  }
  if (p.stage == Pending::Stage::AwaitHello && frame.type == FrameType::Hello) {
    return on_hello(carrier, p, *body, now);
  }
  if (p.stage == Pending::Stage::AwaitHello && frame.type == FrameType::Resume) {
    return on_resume(carrier, p, *body);
  }
  if (p.stage == Pending::Stage::AwaitProof && frame.type == FrameType::Proof) {
    return on_proof(carrier, p, *body, now);
  }
  drop_pending(carrier, AcceptorDrop::UnexpectedFrame);
  return false;
}

bool SessionAcceptor::on_hello(CarrierId carrier, Pending& p, std::string_view body, Instant now) {
  if (!body.empty() && static_cast<uint8_t>(body[0]) != kSessionVersion) {
    // Before the size: another version's HELLO has another size.
    refuse(carrier, p, RefuseReason::BadVersion, AcceptorDrop::BadVersion);
    return false;
  }
  const auto hello = parse_hello(body);
  if (!hello) {
    drop_pending(carrier, AcceptorDrop::MalformedFrame);
    return false;
  }
  p.auth.set_client_nonce(hello->client_nonce);  // a REFUSE below is MACed for this client
  if (by_id_.count(hello->session_id) != 0) {
    // Never our client's doing (it resumes a session it said HELLO for): a
    // guess at a 128-bit id, or a replayed HELLO. The session is untouched.
    refuse(carrier, p, RefuseReason::SessionExists, AcceptorDrop::SessionExists);
    return false;
  }
  if (sessions_.size() >= config_.max_sessions && !evict_finished()) {
    refuse(carrier, p, RefuseReason::Busy, AcceptorDrop::SessionsFull);
    return false;
  }
  const SessionHandle handle = next_handle_++;
  Entry entry;
  entry.session = std::make_unique<Session>(config_, hello->session_id, hello->secret);
  Session& session = *entry.session;
  sessions_.emplace(handle, std::move(entry));
  by_id_.emplace(hello->session_id, handle);
  session.accept_hello(std::move(p.auth), *hello, now);
  bind(carrier, handle);
  ++stats_.sessions_opened;
  events_.push_back({Event::Kind::SessionOpened, handle, carrier, {}});
  return false;
}

bool SessionAcceptor::on_resume(CarrierId carrier, Pending& p, std::string_view body) {
  const auto resume = parse_resume(body);
  if (!resume) {
    drop_pending(carrier, AcceptorDrop::MalformedFrame);
    return false;
  }
  p.auth.set_client_nonce(resume->client_nonce);
  const auto it = by_id_.find(resume->session_id);
  if (it == by_id_.end()) {
    refuse(carrier, p, RefuseReason::UnknownSession, AcceptorDrop::UnknownSession);
    return false;
  }
  const Session& session = *sessions_.at(it->second).session;
  if (session.state() == Session::State::Failed || session.state() == Session::State::Aborted) {
    refuse(carrier, p,
           session.state() == Session::State::Failed ? RefuseReason::Failed : RefuseReason::Aborted,
           AcceptorDrop::ResumeRefused);
    return false;
  }
  if (session.seen_client_nonce(resume->client_nonce)) {
    refuse(carrier, p, RefuseReason::ReplayedResume, AcceptorDrop::ReplayedResume);
    return false;
  }
  p.session = it->second;
  p.client_nonce = resume->client_nonce;
  p.server_nonce = config_.random(kNonceBytes);
  append_frame(p.out, FrameType::Challenge,
               p.auth.seal(FrameType::Challenge, encode(ChallengeMessage{p.server_nonce})));
  p.auth.set_server_nonce(p.server_nonce);
  p.stage = Pending::Stage::AwaitProof;
  return true;
}

bool SessionAcceptor::on_proof(CarrierId carrier, Pending& p, std::string_view body, Instant now) {
  const auto proof = parse_proof(body);
  if (!proof) {
    drop_pending(carrier, AcceptorDrop::MalformedFrame);
    return false;
  }
  const auto it = sessions_.find(p.session);
  if (it == sessions_.end()) {
    refuse(carrier, p, RefuseReason::UnknownSession, AcceptorDrop::UnknownSession);
    return false;
  }
  Session& session = *it->second.session;
  const auto refused =
      session.accept_resume(std::move(p.auth), p.client_nonce, p.server_nonce, *proof, now);
  if (refused) {
    refuse(carrier, p, *refused,
           *refused == RefuseReason::BadProof         ? AcceptorDrop::BadProof
           : *refused == RefuseReason::ReplayedResume ? AcceptorDrop::ReplayedResume
                                                      : AcceptorDrop::ResumeRefused);
    check_session(p.session, now);
    return false;
  }
  if (it->second.carrier && *it->second.carrier != carrier) {
    ++stats_.carriers_replaced;
    close_carrier(*it->second.carrier, p.session, "replaced by a resumed carrier");
  }
  bind(carrier, p.session);
  ++stats_.sessions_resumed;
  events_.push_back({Event::Kind::SessionResumed, p.session, carrier, {}});
  return false;
}

void SessionAcceptor::refuse(CarrierId carrier, Pending& p, RefuseReason reason,
                             AcceptorDrop drop) {
  stats_.drops.count(drop);
  SPDLOG_DEBUG("session acceptor: refusing carrier {}: {}", carrier, to_string(drop));
  append_frame(p.out, FrameType::Refuse,
               p.auth.seal(FrameType::Refuse, encode(RefuseMessage{reason})));
  p.stage = Pending::Stage::Refused;
  events_.push_back(
      {Event::Kind::CloseCarrier, 0, carrier, std::string("refused: ") + to_string(reason)});
}

void SessionAcceptor::drop_pending(CarrierId carrier, AcceptorDrop drop) {
  stats_.drops.count(drop);
  SPDLOG_DEBUG("session acceptor: dropping carrier {}: {}", carrier, to_string(drop));
  // Kept (Refused, nothing to send) until the owner reports it closed or it times out:
  // the caller may still hold a reference to it.
  if (auto it = pending_.find(carrier); it != pending_.end()) {
    it->second.stage = Pending::Stage::Refused;
    it->second.out.clear();
    it->second.out_pos = 0;
  }
  events_.push_back({Event::Kind::CloseCarrier, 0, carrier, to_string(drop)});
}

void SessionAcceptor::bind(CarrierId carrier, SessionHandle handle) {
  bound_[carrier] = handle;
  Entry& entry = sessions_.at(handle);
  entry.carrier = carrier;
  update_awake(handle, entry);
}

void SessionAcceptor::close_carrier(CarrierId carrier, SessionHandle handle, std::string reason) {
  bound_.erase(carrier);
  if (auto it = sessions_.find(handle); it != sessions_.end() && it->second.carrier == carrier) {
    it->second.carrier.reset();
    update_awake(handle, it->second);
  }
  events_.push_back({Event::Kind::CloseCarrier, handle, carrier, std::move(reason)});
}

void SessionAcceptor::update_awake(SessionHandle handle, const Entry& entry) {
  if (entry.reported_end && !entry.carrier) {
    awake_.erase(handle);
  } else {
    awake_.insert(handle);
  }
}

void SessionAcceptor::forget(Sessions::iterator it) {
  const SessionHandle handle = it->first;
  Entry& entry = it->second;
  if (entry.carrier) {
    bound_.erase(*entry.carrier);
    events_.push_back({Event::Kind::CloseCarrier, handle, *entry.carrier, "session ended"});
  }
  if (entry.reported_end) {
    expiry_.erase({entry.expires_at, handle});
  }
  awake_.erase(handle);
  by_id_.erase(entry.session->id());
  sessions_.erase(it);
}

void SessionAcceptor::check_session(SessionHandle handle, Instant now) {
  const auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    return;
  }
  Entry& entry = it->second;
  Session& s = *entry.session;
  if (entry.carrier && s.carrier_failed()) {
    const CarrierId carrier = *entry.carrier;
    close_carrier(carrier, handle,
                  s.state() == Session::State::Failed ? "session failed: " + s.error()
                                                      : "session dropped its carrier");
    s.carrier_lost(now);
  }
  if (entry.carrier && s.state() == Session::State::Aborted && s.carrier_output().empty()) {
    // Its ABORT (if any) is out: nothing more goes on this carrier.
    close_carrier(*entry.carrier, handle, s.error());
    s.carrier_lost(now);
  }
  if (!entry.reported_end) {
    std::optional<Event::Kind> end;
    if (s.state() == Session::State::Aborted) {
      end = Event::Kind::SessionAborted;
      ++stats_.sessions_aborted;
    } else if (s.state() == Session::State::Failed) {
      end = Event::Kind::SessionFailed;
      ++stats_.sessions_failed;
    } else if (s.finished()) {
      end = Event::Kind::SessionFinished;
      ++stats_.sessions_finished;
    }
    if (end) {
      entry.reported_end = true;
      entry.ended_at = now;
      // A failed session goes at the next tick; the others linger.
      entry.expires_at =
          now + (s.state() == Session::State::Failed ? Duration{1} : config_.finished_linger);
      expiry_.emplace(entry.expires_at, handle);
      events_.push_back({*end, handle, entry.carrier.value_or(0),
                         *end == Event::Kind::SessionFinished ? std::string() : s.error()});
    }
  }
  update_awake(handle, entry);
}

void SessionAcceptor::on_carrier_lost(CarrierId carrier, Instant now) {
  now_ = std::max(now_, now);
  pending_.erase(carrier);
  const auto b = bound_.find(carrier);
  if (b == bound_.end()) {
    return;
  }
  const SessionHandle handle = b->second;
  bound_.erase(b);
  Entry& entry = sessions_.at(handle);
  entry.carrier.reset();
  entry.session->carrier_lost(now);
  check_session(handle, now);
}

std::string_view SessionAcceptor::carrier_output(CarrierId carrier) const {
  if (const auto p = pending_.find(carrier); p != pending_.end()) {
    return std::string_view(p->second.out).substr(p->second.out_pos);
  }
  if (const auto b = bound_.find(carrier); b != bound_.end()) {
    return sessions_.at(b->second).session->carrier_output();
  }
  return {};
}

size_t SessionAcceptor::carrier_output_pieces(CarrierId carrier, std::string_view* pieces,
                                              size_t max) const {
  if (const auto b = bound_.find(carrier); b != bound_.end()) {
    return sessions_.at(b->second).session->carrier_output_pieces(pieces, max);
  }
  const std::string_view out = carrier_output(carrier);
  if (out.empty() || max == 0) {
    return 0;
  }
  pieces[0] = out;
  return 1;
}

void SessionAcceptor::consume_carrier_output(CarrierId carrier, size_t n) {
  if (const auto p = pending_.find(carrier); p != pending_.end()) {
    Pending& pending = p->second;
    pending.out_pos = std::min(pending.out.size(), pending.out_pos + n);
    return;
  }
  if (const auto b = bound_.find(carrier); b != bound_.end()) {
    const SessionHandle handle = b->second;
    sessions_.at(handle).session->consume_carrier_output(n);
    check_session(handle, now_);
  }
}

std::optional<SessionAcceptor::Event> SessionAcceptor::next_event() {
  if (events_.empty()) {
    return std::nullopt;
  }
  Event e = std::move(events_.front());
  events_.pop_front();
  return e;
}

Session* SessionAcceptor::session_of(CarrierId carrier) {
  const auto b = bound_.find(carrier);
  return b == bound_.end() ? nullptr : sessions_.at(b->second).session.get();
}

Session* SessionAcceptor::session(SessionHandle handle) {
  const auto it = sessions_.find(handle);
  return it == sessions_.end() ? nullptr : it->second.session.get();
}

bool SessionAcceptor::evict_finished() {
  // A finished session is kept only so that a client whose last ACK was cut
  // off can still finish (finished_linger); a new session needs the place
  // more. The one that ended first goes (expiry_ is in that order: every
  // such session lingers equally long).
  for (const auto& [expires_at, handle] : expiry_) {
    const auto it = sessions_.find(handle);
    const Session& s = *it->second.session;
    // Not one whose received bytes the application has still to read.
    if ((s.state() == Session::State::Closed || s.state() == Session::State::Aborted) &&
        s.readable().empty()) {
      forget(it);
      ++stats_.finished_evicted;
      return true;
    }
  }
  return false;
}

void SessionAcceptor::tick(Instant now) {
  now_ = std::max(now_, now);
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now_ - it->second.accepted_at < config_.handshake_timeout) {
      ++it;
      continue;
    }
    if (it->second.stage != Pending::Stage::Refused) {
      stats_.drops.count(AcceptorDrop::HandshakeTimeout);
      events_.push_back({Event::Kind::CloseCarrier, 0, it->first, "handshake timeout"});
    }
    it = pending_.erase(it);
  }
  while (!expiry_.empty() && expiry_.begin()->first <= now_) {
    forget(sessions_.find(expiry_.begin()->second));
  }
  // check_session may put a session to rest: walk a copy.
  const std::vector<SessionHandle> awake(awake_.begin(), awake_.end());
  for (const SessionHandle handle : awake) {
    Session& s = *sessions_.at(handle).session;
    s.tick(now_);
    if (const auto lifetime = config_.idle_session_lifetime;
        !sessions_.at(handle).carrier && s.state() == Session::State::Disconnected &&
        s.disconnected_since() && now_ - *s.disconnected_since() >= lifetime) {
      stats_.drops.count(AcceptorDrop::SessionExpired);
      s.fail("expired: no carrier for " + std::to_string(to_ms(lifetime)) + " ms");
    }
    check_session(handle, now_);
  }
}

std::optional<Instant> SessionAcceptor::next_deadline() const {
  std::optional<Instant> at;
  const auto earliest = [&at](Instant t) { at = at ? std::min(*at, t) : t; };
  for (const auto& [carrier, p] : pending_) {
    earliest(p.accepted_at + config_.handshake_timeout);
  }
  if (!expiry_.empty()) {
    earliest(expiry_.begin()->first);
  }
  for (const SessionHandle handle : awake_) {
    const Entry& entry = sessions_.at(handle);
    const Session& s = *entry.session;
    if (const auto d = s.next_deadline()) {
      earliest(*d);
    }
    if (!entry.carrier && s.state() == Session::State::Disconnected && s.disconnected_since()) {
      earliest(*s.disconnected_since() + config_.idle_session_lifetime);
    }
  }
  return at;
}

}  // namespace tinytcp::session

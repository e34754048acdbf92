#include "session/session.hh"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace tinytcp::session {

namespace {

// Frames are made while less than this waits in carrier_output().
constexpr size_t kOutputHighWater = 256 * 1024;
constexpr size_t kMaxSeenNonces = 64;

}  // namespace

Session::Session(SessionConfig config)
    : config_(std::move(config)),
      role_(Role::Client),
      state_(State::Opening),
      sender_(config_.replay_capacity),
      receiver_(std::max<size_t>(config_.receive_capacity, kInitialLimit)),
      backoff_(config_.backoff_initial, config_.backoff_max) {
  if (config_.ack_interval == 0) {
    config_.ack_interval = std::max<size_t>(1, config_.receive_capacity / 4);
  }
}

Session::Session(SessionConfig config, std::string session_id, std::string secret)
    : Session(std::move(config)) {
  role_ = Role::Server;
  state_ = State::Disconnected;
  id_ = std::move(session_id);
  proof_key_ = proof_key(secret, config_.psk);
  secret_ = std::move(secret);
}

// --- application side ---

size_t Session::write(std::string_view data) {
  if (sender_.fin_requested() || abort_requested_ || ended()) {
    return 0;
  }
  passive_ = false;
  const size_t taken = sender_.write(data, now_);
  stats_.bytes_written += taken;
  if (taken < data.size()) {
    write_blocked_.start(now_);
  }
  pump();
  return taken;
}

void Session::shutdown_write() {
  if (sender_.fin_requested() || abort_requested_ || ended()) {
    return;
  }
  sender_.request_fin();
  passive_ = false;
  pump();
}

void Session::abort(AbortReason reason) {
  if (abort_requested_ || ended()) {
    return;
  }
  abort_requested_ = reason;
  passive_ = false;
  pump();  // flowing: the ABORT goes out now
  if (state_ != State::Aborted && (role_ == Role::Server || !hello_sent_)) {
    // Nobody to tell now: a server's client learns it when it resumes (REFUSE
    // aborted); a client that never sent its HELLO has no session there.
    end_aborted(std::string("aborted: ") + to_string(reason));
  }
}

void Session::end_aborted(std::string error) {
  SPDLOG_DEBUG("session {}", error);
  state_ = State::Aborted;
  error_ = std::move(error);
  hold_until_.reset();  // the ABORT (if any) goes now
}

void Session::consume(size_t n) {
  stats_.bytes_read += receiver_.consume(n);
  if (receiver_.empty() && !receiver_.fin()) {
    read_blocked_.start(now_);
  }
  pump();
}

// --- carrier side ---

void Session::see(Instant now) {
  now_ = std::max(now_, now);
  if (!disconnected_since_ && !has_carrier_) {
    disconnected_since_ = now_;
  }
  stats_.unacked_bytes = sender_.unacked();
  stats_.oldest_unacked_age = sender_.oldest_unacked_age(now_);
}

void Session::attach_carrier(Instant now) {
  see(now);
  if (role_ != Role::Client || ended()) {
    return;
  }
  reset_carrier(config_.psk ? ControlAuth(*config_.psk, true) : ControlAuth(), now);
  passive_ = false;
  server_nonce_.clear();
  if (id_.empty()) {
    new_identity();
  } else {
    client_nonce_ = config_.random(kNonceBytes);
  }
  if (!hello_sent_) {
    HelloMessage hello;
    hello.flags = config_.psk ? 1 : 0;
    hello.session_id = id_;
    hello.secret = secret_;
    hello.client_nonce = client_nonce_;
    hello.limit = receiver_.limit();
    state_ = State::Opening;
    send_control(FrameType::Hello, encode(hello));
    auth_.set_client_nonce(client_nonce_);
    receiver_.acked();  // the HELLO told the limit
    hello_sent_ = true;
    // Until the WELCOME says more, the server takes kInitialLimit bytes.
    sender_.reset_limit(kInitialLimit);
    pump();  // data (and a FIN) right behind the HELLO, in the same write
  } else {
    state_ = State::Resuming;
    send_control(FrameType::Resume, encode(ResumeMessage{id_, client_nonce_}));
    auth_.set_client_nonce(client_nonce_);
  }
}

void Session::new_identity() {
  const std::string r = config_.random(kSessionIdBytes + kSecretBytes + kNonceBytes);
  id_ = r.substr(0, kSessionIdBytes);
  secret_ = r.substr(kSessionIdBytes, kSecretBytes);
  client_nonce_ = r.substr(kSessionIdBytes + kSecretBytes);
  proof_key_ = proof_key(secret_, config_.psk);
  hello_sent_ = false;
}

void Session::reset_carrier(ControlAuth&& auth, Instant now) {
  if (has_carrier_ && !carrier_failed_) {
    went_disconnected(now);  // replaced (an address change): the old one is lost
  }
  has_carrier_ = true;
  carrier_failed_ = false;
  auth_ = std::move(auth);
  decoder_.clear();
  out_.clear();
  last_received_ = now;
  last_sent_ = now;
  sender_.restart();
  fin_ack_told_ = false;
  ack_request_outstanding_ = false;
  disconnected_since_.reset();
  hold_until_.reset();
  ++stats_.carriers_attached;
}

void Session::consume_carrier_output(size_t n) {
  out_.consume(n);
  pump();
  check_finished();
}

void Session::on_carrier_input(std::string_view bytes, Instant now) {
  see(now);
  if (!carrier_usable() || bytes.empty() || state_ == State::Aborted) {
    return;
  }
  last_received_ = now_;
  const auto result = decoder_.feed(bytes, [this](const FrameView& f) { return on_frame(f); });
  if (result.error) {
    drop_carrier(*result.error == FrameError::Oversized ? SessionDrop::OversizedFrame
                                                        : SessionDrop::BadFrame);
    return;
  }
  pump();
  check_finished();
}

void Session::carrier_lost(Instant now) {
  see(now);
  if (!has_carrier_) {
    return;
  }
  if (!carrier_failed_) {
    went_disconnected(now_);
  }
  has_carrier_ = false;
  carrier_failed_ = false;
}

void Session::went_disconnected(Instant now) {
  ++stats_.carriers_lost;
  out_.clear();
  decoder_.clear();
  if (state_ == State::Open || state_ == State::Opening || state_ == State::Resuming) {
    state_ = State::Disconnected;
  }
  if (!disconnected_since_) {
    disconnected_since_ = now;
  }
  if (role_ == Role::Client && !ended()) {
    // (Not at the end of every session: the jitter costs a getrandom.)
    next_attempt_ = now + backoff_.next(config_.random);
  }
}

void Session::drop_carrier(SessionDrop reason) {
  stats_.drops.count(reason);
  SPDLOG_DEBUG("session: dropping carrier: {}", to_string(reason));
  went_disconnected(now_);
  carrier_failed_ = true;
}

bool Session::wants_carrier(Instant now) const {
  if (role_ != Role::Client || (has_carrier_ && !carrier_failed_)) {
    return false;
  }
  if (state_ != State::Opening && state_ != State::Disconnected) {
    return false;
  }
  if (passive_ && !sender_.has_unsent()) {
    return false;
  }
  return now >= next_attempt_;
}

void Session::connect_failed(Instant now) {
  see(now);
  next_attempt_ = now_ + backoff_.next(config_.random);
}

void Session::passivate(Instant now) {
  see(now);
  if (ended()) {
    return;
  }
  if (has_carrier_ && !carrier_failed_) {
    went_disconnected(now_);
    --stats_.carriers_lost;  // on purpose, not a loss
  }
  has_carrier_ = false;
  carrier_failed_ = false;
  passive_ = true;
  backoff_.reset();
  next_attempt_ = now_;
  ++stats_.passivations;
}

void Session::tick(Instant now) {
  see(now);
  write_blocked_.flush(now_);
  read_blocked_.flush(now_);
  stats_.write_blocked = write_blocked_.total();
  stats_.read_blocked = read_blocked_.total();
  if (ended()) {
    return;
  }
  if (hold_until_ && now_ >= *hold_until_) {
    hold_until_.reset();
  }
  if (carrier_usable() && now_ - last_received_ >= config_.carrier_timeout) {
    drop_carrier(SessionDrop::CarrierTimeout);
  }
  if (!carrier_usable() && config_.give_up && !passive_ && disconnected_since_ &&
      now_ - *disconnected_since_ >= *config_.give_up) {
    fail("gave up: no carrier for " + std::to_string(to_ms(*config_.give_up)) + " ms");
    return;
  }
  if (flowing() && pending_output() == 0 && now_ - last_sent_ >= config_.heartbeat_interval) {
    send_ack(0);
    ++stats_.heartbeats_sent;
  }
  pump();
}

std::optional<Instant> Session::next_deadline() const {
  if (ended()) {
    return std::nullopt;
  }
  std::optional<Instant> at;
  const auto earliest = [&at](Instant t) { at = at ? std::min(*at, t) : t; };
  if (hold_until_) {
    earliest(*hold_until_);
  }
  if (carrier_usable()) {
    earliest(last_received_ + config_.carrier_timeout);
    if (flowing() && pending_output() == 0) {
      earliest(last_sent_ + config_.heartbeat_interval);
    }
  } else {
    if (role_ == Role::Client && (!passive_ || sender_.has_unsent())) {
      earliest(next_attempt_);
    }
    if (config_.give_up && !passive_ && disconnected_since_) {
      earliest(*disconnected_since_ + *config_.give_up);
    }
  }
  return at;
}

void Session::fail(std::string error) {
  if (state_ == State::Failed || state_ == State::Aborted) {
    return;
  }
  SPDLOG_DEBUG("session failed: {}", error);
  state_ = State::Failed;
  error_ = std::move(error);
  hold_until_.reset();
  out_.clear();
  carrier_failed_ = true;
}

// --- frames out ---

void Session::send_control(FrameType type, std::string_view body) {
  out_.push_frame(type, auth_.seal(type, body));
  ++stats_.frames_sent;
  last_sent_ = now_;
}

void Session::send_ack(uint8_t flags) {
  AckMessage ack;
  ack.received = receiver_.position();
  ack.limit = receiver_.limit();
  ack.flags = flags;
  send_control(FrameType::Ack, encode(ack));
  receiver_.acked();
  ++stats_.acks_sent;
}

void Session::pump() {
  if (!sending()) {
    return;
  }
  if (abort_requested_ && (state_ == State::Open || state_ == State::Opening)) {
    send_control(FrameType::Abort, encode(AbortMessage{*abort_requested_}));
    ++stats_.aborts_sent;
    end_aborted(std::string("aborted: ") + to_string(*abort_requested_));
    return;
  }
  while (pending_output() < kOutputHighWater) {
    const std::string_view chunk = sender_.next_data(kMaxDataBody);
    if (chunk.empty()) {
      break;
    }
    out_.push_data(sender_.next_position(), chunk.size());
    ++stats_.frames_sent;
    stats_.bytes_sent += chunk.size();
    stats_.bytes_replayed += sender_.sent(chunk.size());
    last_sent_ = now_;
  }
  if (sender_.fin_due()) {
    send_control(FrameType::Fin, encode(FinMessage{sender_.fin_position()}));
    sender_.fin_sent();
  }
  // A client that already has the server's kFinAcked stays quiet: the server
  // said it only once its FIN was acknowledged, and it is Closed.
  if (sender_.fin_acked() && receiver_.fin() && !fin_ack_told_ &&
      (role_ == Role::Server || !peer_done_)) {
    send_ack(AckMessage::kFinAcked);
    fin_ack_told_ = true;
  } else if (!ack_request_outstanding_ && sender_.in_flight() > 0 &&
             sender_.in_flight() >= sender_.capacity() / 2) {
    // Half the replay buffer in flight and unacknowledged: ask, in case the
    // peer's ack_interval is larger than what we can hold.
    send_ack(AckMessage::kReplyRequested);
    ack_request_outstanding_ = true;
  } else if (receiver_.ack_due(config_.ack_interval)) {
    send_ack(0);
  }
  release_hold();
}

void Session::release_hold() {
  if (hold_until_ && (out_.size() > welcome_bytes_ || receiver_.position() >= kInitialLimit / 2 ||
                      !carrier_usable() || ended())) {
    hold_until_.reset();
  }
}

void Session::check_finished() {
  // The client also waits for the server's kFinAcked: else an ACK cut off on
  // the way would leave the server holding an unacknowledged FIN.
  if (state_ == State::Open && sender_.fin_acked() && receiver_.fin() && pending_output() == 0 &&
      (role_ == Role::Server || peer_done_)) {
    state_ = State::Closed;
  }
}

// --- server side ---

void Session::accept_hello(ControlAuth&& auth, const HelloMessage& hello, Instant now) {
  see(now);
  reset_carrier(std::move(auth), now_);
  server_nonce_ = config_.random(kNonceBytes);  // the server's one draw per session
  WelcomeMessage welcome{server_nonce_, receiver_.limit()};
  send_control(FrameType::Welcome, encode(welcome));
  receiver_.acked();  // the WELCOME told the limit
  if (config_.welcome_hold > Duration::zero()) {
    hold_until_ = now_ + config_.welcome_hold;
    welcome_bytes_ = out_.size();
  }
  auth_.set_server_nonce(server_nonce_);
  sender_.raise_limit(hello.limit);
  state_ = State::Open;
  pump();
}

bool Session::seen_client_nonce(std::string_view client_nonce) const {
  return std::find(seen_nonces_.begin(), seen_nonces_.end(), client_nonce) != seen_nonces_.end();
}

std::optional<RefuseReason> Session::accept_resume(ControlAuth&& auth,
                                                   std::string_view client_nonce,
                                                   std::string_view server_nonce,
                                                   const ProofMessage& proof, Instant now) {
  see(now);
  if (state_ == State::Failed) {
    return RefuseReason::Failed;
  }
  if (state_ == State::Aborted) {
    return RefuseReason::Aborted;
  }
  const auto expected =
      resume_proof(proof_key_, true, id_, client_nonce, server_nonce, proof.received, proof.limit);
  if (!constant_time_equal(expected, proof.proof)) {
    return RefuseReason::BadProof;
  }
  if (seen_client_nonce(client_nonce)) {
    return RefuseReason::ReplayedResume;
  }
  if (const auto bad = sender_.check_position(proof.received)) {
    // An authenticated claim we cannot meet: this session cannot go on.
    stats_.drops.count(*bad);
    fail(std::string("resume claims an impossible position: ") + to_string(*bad));
    return RefuseReason::Failed;
  }
  seen_nonces_.emplace_back(client_nonce);
  if (seen_nonces_.size() > kMaxSeenNonces) {
    seen_nonces_.pop_front();
  }
  reset_carrier(std::move(auth), now_);
  ProofMessage resumed;
  resumed.received = receiver_.position();
  resumed.limit = receiver_.limit();
  resumed.proof = resume_proof(proof_key_, false, id_, client_nonce, server_nonce, resumed.received,
                               resumed.limit);
  send_control(FrameType::Resumed, encode(resumed));
  receiver_.acked();  // RESUMED told the position and the limit
  if (state_ != State::Closed) {
    state_ = State::Open;
  }
  ++stats_.resumes;
  apply_peer_position(proof.received, proof.limit);
  pump();
  return std::nullopt;
}

}  // namespace tinytcp::session

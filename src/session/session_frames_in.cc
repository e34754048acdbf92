#include "session/session.hh"

#include <spdlog/spdlog.h>

// Session, continued from session.cc: what it does with each frame from the
// peer. The application side, the carrier side, frames out and the server's
// accept calls are in session.cc.

namespace tinytcp::session {

// --- frames in ---

bool Session::on_frame(const FrameView& frame) {
  ++stats_.frames_received;
  if (frame.type == FrameType::Data) {
    if (!flowing()) {
      drop_carrier(SessionDrop::UnexpectedFrame);
      return false;
    }
    on_data(frame.body);
  } else {
    const auto body = auth_.open(frame.type, frame.body);
    if (!body) {
      drop_carrier(SessionDrop::BadMac);
      return false;
    }
    on_control(frame.type, *body);
  }
  return carrier_usable() && state_ != State::Failed && state_ != State::Aborted;
}

bool Session::on_control(FrameType type, std::string_view body) {
  const bool client = role_ == Role::Client;
  if (type == FrameType::Refuse && client) {
    on_refuse(body);
  } else if (type == FrameType::Welcome && client && state_ == State::Opening) {
    on_welcome(body);
  } else if (type == FrameType::Challenge && client && state_ == State::Resuming &&
             server_nonce_.empty()) {
    on_challenge(body);
  } else if (type == FrameType::Resumed && client && state_ == State::Resuming &&
             !server_nonce_.empty()) {
    on_resumed(body);
  } else if (type == FrameType::Ack && flowing()) {
    on_ack(body);
  } else if (type == FrameType::Fin && flowing()) {
    on_fin(body);
  } else if (type == FrameType::Abort && flowing()) {
    on_abort(body);
  } else {
    drop_carrier(SessionDrop::UnexpectedFrame);
  }
  return carrier_usable();
}

void Session::on_welcome(std::string_view body) {
  const auto m = parse_welcome(body);
  if (!m) {
    drop_carrier(SessionDrop::MalformedFrame);
    return;
  }
  server_nonce_ = m->server_nonce;
  auth_.set_server_nonce(server_nonce_);
  sender_.raise_limit(m->limit);
  state_ = State::Open;
  backoff_.reset();
}

void Session::on_challenge(std::string_view body) {
  const auto m = parse_challenge(body);
  if (!m) {
    drop_carrier(SessionDrop::MalformedFrame);
    return;
  }
  server_nonce_ = m->server_nonce;
  auth_.set_server_nonce(server_nonce_);
  ProofMessage proof;
  proof.received = receiver_.position();
  proof.limit = receiver_.limit();
  proof.proof = resume_proof(proof_key_, true, id_, client_nonce_, server_nonce_, proof.received,
                             proof.limit);
  send_control(FrameType::Proof, encode(proof));
  receiver_.acked();  // the PROOF told the position and the limit
}

void Session::on_resumed(std::string_view body) {
  const auto m = parse_proof(body);
  if (!m) {
    drop_carrier(SessionDrop::MalformedFrame);
    return;
  }
  const auto expected =
      resume_proof(proof_key_, false, id_, client_nonce_, server_nonce_, m->received, m->limit);
  if (!constant_time_equal(expected, m->proof)) {
    drop_carrier(SessionDrop::BadProof);
    return;
  }
  if (const auto bad = sender_.check_position(m->received)) {
    drop_carrier(*bad);
    return;
  }
  state_ = State::Open;
  backoff_.reset();
  ++stats_.resumes;
  apply_peer_position(m->received, m->limit);
}

void Session::on_refuse(std::string_view body) {
  const auto m = parse_refuse(body);
  if (!m) {
    drop_carrier(SessionDrop::MalformedFrame);
    return;
  }
  if (m->reason == RefuseReason::Busy && state_ == State::Opening) {
    // The server took nothing of it (not the data behind the HELLO either):
    // the same HELLO again after the backoff.
    hello_sent_ = false;
    drop_carrier(SessionDrop::UnexpectedFrame);
    return;
  }
  if (m->reason == RefuseReason::Aborted) {
    ++stats_.aborts_received;
    end_aborted("reset by the peer: session aborted");
    return;
  }
  if (m->reason == RefuseReason::UnknownSession && state_ == State::Resuming && abort_requested_) {
    end_aborted(std::string("aborted: ") + to_string(*abort_requested_));
    return;
  }
  if (m->reason == RefuseReason::UnknownSession && state_ == State::Resuming &&
      receiver_.nothing_received() && sender_.acked() == 0) {
    // The server does not know the session and neither acknowledged nor sent
    // a byte of it: its HELLO was lost with the carrier (the data behind it
    // too), or the server restarted or expired it before any byte moved. A
    // new session (new id and secret) loses or repeats nothing.
    SPDLOG_DEBUG("session: unknown to the server before any byte; starting over");
    ++stats_.restarts;
    id_.clear();
    hello_sent_ = false;
    went_disconnected(now_);
    carrier_failed_ = true;
    return;
  }
  fail(std::string("peer refused the session: ") + to_string(m->reason));
}

void Session::on_data(std::string_view body) {
  if (const auto bad = receiver_.on_data(body)) {
    drop_carrier(*bad);
    return;
  }
  stats_.bytes_received += body.size();
  if (!body.empty()) {
    read_blocked_.stop(now_);
  }
}

void Session::on_ack(std::string_view body) {
  const auto m = parse_ack(body);
  if (!m) {
    drop_carrier(SessionDrop::MalformedFrame);
    return;
  }
  // Bytes still queued for this carrier (their DATA bodies are views of the
  // replay buffer) cannot have arrived: such an ACK is as impossible as one
  // past everything ever sent.
  const auto unsent = out_.first_unsent_data();
  if (m->received > sender_.max_sent_position() || (unsent && m->received > *unsent)) {
    drop_carrier(SessionDrop::AckBeyondSent);
    return;
  }
  if ((m->flags & AckMessage::kReplyRequested) != 0) {
    receiver_.request_ack();
  }
  if ((m->flags & AckMessage::kFinAcked) != 0 && receiver_.fin()) {
    peer_done_ = true;
  }
  ack_request_outstanding_ = false;
  apply_peer_position(m->received, m->limit);
}

void Session::on_fin(std::string_view body) {
  const auto m = parse_fin(body);
  if (!m) {
    drop_carrier(SessionDrop::MalformedFrame);
    return;
  }
  if (const auto bad = receiver_.on_fin(m->position)) {
    drop_carrier(*bad);
    return;
  }
  read_blocked_.stop(now_);
}

void Session::on_abort(std::string_view body) {
  const auto m = parse_abort(body);
  if (!m) {
    drop_carrier(SessionDrop::MalformedFrame);
    return;
  }
  ++stats_.aborts_received;
  end_aborted(std::string("reset by the peer: ") + to_string(m->reason));
}

void Session::apply_peer_position(uint64_t received, uint64_t limit) {
  sender_.acknowledge(received, limit);
  if (sender_.has_free_space()) {
    write_blocked_.stop(now_);
  }
}

}  // namespace tinytcp::session

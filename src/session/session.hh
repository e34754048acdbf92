#pragma once

// Session: one end of a robust session (docs/session.md), sans-I/O. It gives
// the application one bidirectional byte stream with half-close that survives
// the loss of the carrier under it: a reliable byte stream (our TCP or kernel
// TCP) that the OWNER opens, accepts and closes. The owner moves bytes between
// carrier_output()/on_carrier_input() and the current carrier, reports a lost
// carrier, and brings the time; the session never does I/O.
//
// Exactly once: both ends count the data bytes of each direction with 64-bit
// positions; ACKs carry the receiver's position; written bytes stay in a
// bounded ReplayBuffer until acknowledged; after a reconnection each end states
// its position (authenticated) and the other resends exactly from there.
// The two directions are SessionSender and SessionReceiver; this class holds
// the carrier, the handshakes and the state.
//
// Client: made by the owner, which connects a carrier whenever
// wants_carrier(now) and calls attach_carrier(). It picks the session's id
// and secret itself and sends them in its HELLO, with the first data right
// behind (up to kInitialLimit). Server: made by SessionAcceptor on a HELLO,
// which routes later carriers to it on a RESUME.
//
// After every call the owner looks at carrier_output() (it may have grown),
// carrier_failed() (close that carrier, then carrier_lost()), state() and
// next_deadline().

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "session/blocked_timer.hh"
#include "session/control_auth.hh"
#include "session/frame_codec.hh"
#include "session/output_queue.hh"
#include "session/reconnect_backoff.hh"
#include "session/session_config.hh"
#include "session/session_messages.hh"
#include "session/session_receiver.hh"
#include "session/session_sender.hh"
#include "session/session_stats.hh"
#include "util/time.hh"

namespace tinytcp::session {

class Session {
 public:
  enum class Role { Client, Server };
  enum class State {
    Opening,       // client: HELLO sent (data may follow it), or not yet connected
    Open,          // a carrier is up and handshaken: bytes flow
    Resuming,      // client: RESUME sent on a new carrier
    Disconnected,  // no usable carrier; the client reconnects, the server waits
    Closed,        // both directions finished and acknowledged
    Failed,        // refused by the peer, gave up, or broken beyond repair: error()
    Aborted,       // reset by abort() here or an ABORT from the peer: error() says why
  };

  // A client session.
  explicit Session(SessionConfig config);
  // A server session with the id and secret from the client's HELLO
  // (SessionAcceptor makes these).
  Session(SessionConfig config, std::string session_id, std::string secret);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Application side.
  // Takes as much of `data` as the replay buffer holds (0: full, try after
  // more is acknowledged). Nothing after shutdown_write() or once Failed.
  size_t write(std::string_view data);
  // Half-close: a FIN follows the last byte written.
  void shutdown_write();
  // Reset, like a TCP RST: no more writes; an ABORT with `reason` goes out as
  // soon as the session flows (at once when it does, behind the HELLO too; a
  // client resumes first) and the state becomes Aborted. A server session
  // without a carrier, or a client that never sent its HELLO, is Aborted at
  // once (the peer learns on its next resume, or never heard of it).
  void abort(AbortReason reason);
  // In-order received bytes (at the ring's wrap point, the part before it).
  std::string_view readable() const { return receiver_.readable(); }
  void consume(size_t n);
  // The peer half-closed and every byte it sent has been read.
  bool peer_finished() const { return receiver_.finished(); }

  // Carrier side.
  // Client: a new carrier is connected (it replaces any current one).
  void attach_carrier(Instant now);
  // What goes on the carrier next, one contiguous piece at a time (a DATA
  // frame's header and its body are two: the body is sent from the replay
  // buffer, not copied); empty when nothing waits.
  // Empty too while a server holds its WELCOME (SessionConfig::welcome_hold).
  std::string_view carrier_output() const {
    return hold_until_ ? std::string_view() : out_.front(sender_);
  }
  // Up to `max` pieces of the output in order (for one gather write).
  size_t carrier_output_pieces(std::string_view* pieces, size_t max) const {
    return hold_until_ ? 0 : out_.pieces(sender_, pieces, max);
  }
  void consume_carrier_output(size_t n);
  void on_carrier_input(std::string_view bytes, Instant now);
  // The carrier broke (RST, EOF, error) or the owner closed a failed one.
  void carrier_lost(Instant now);
  // The session gave up on the current carrier (dead, bad input, refused):
  // the owner closes it and calls carrier_lost().
  bool carrier_failed() const { return has_carrier_ && carrier_failed_; }
  bool has_carrier() const { return has_carrier_; }
  // Client: no usable carrier, the backoff has passed, and (if passive) there
  // is something to send: connect one now.
  bool wants_carrier(Instant now) const;
  // Client: the owner could not connect a carrier (refused, unreachable):
  // wants_carrier() stays false until the next backoff delay has passed.
  void connect_failed(Instant now);
  // The owner closes the carrier of an idle session on purpose: the session
  // stays; the next write() (or shutdown_write()) makes the client want a
  // carrier again.
  void passivate(Instant now);
  bool passive() const { return passive_; }

  void tick(Instant now);
  std::optional<Instant> next_deadline() const;

  State state() const { return state_; }
  const std::string& error() const { return error_; }
  // Both directions closed and acknowledged.
  bool finished() const { return state_ == State::Closed; }
  // Closed, Failed or Aborted: nothing more will move.
  bool ended() const {
    return state_ == State::Closed || state_ == State::Failed || state_ == State::Aborted;
  }
  const SessionStats& stats() const { return stats_; }
  Role role() const { return role_; }
  const std::string& id() const { return id_; }
  // When the session last lost its carrier (nullopt: it has one).
  std::optional<Instant> disconnected_since() const { return disconnected_since_; }

  // For SessionAcceptor (server sessions).
  // A HELLO on a new carrier: WELCOME goes out on it.
  void accept_hello(ControlAuth&& auth, const HelloMessage& hello, Instant now);
  bool seen_client_nonce(std::string_view client_nonce) const;
  // A PROOF on a new carrier after RESUME/CHALLENGE: if it verifies and the
  // claim is consistent, the carrier replaces the current one and RESUMED
  // goes out; otherwise the reason to refuse it.
  std::optional<RefuseReason> accept_resume(ControlAuth&& auth, std::string_view client_nonce,
                                            std::string_view server_nonce,
                                            const ProofMessage& proof, Instant now);
  void fail(std::string error);

 private:
  size_t pending_output() const { return out_.size(); }
  bool carrier_usable() const { return has_carrier_ && !carrier_failed_; }
  // Bytes from the peer may flow: the handshake on this carrier is done.
  bool flowing() const {
    return carrier_usable() && (state_ == State::Open || state_ == State::Closed);
  }
  // Ours may: also a client's, right behind its HELLO.
  bool sending() const {
    return flowing() || (carrier_usable() && state_ == State::Opening && hello_sent_);
  }
  // Client: a new id, secret and first nonce, from one draw of randomness.
  void new_identity();

  void see(Instant now);
  void reset_carrier(ControlAuth&& auth, Instant now);
  void went_disconnected(Instant now);
  void drop_carrier(SessionDrop reason);
  void send_control(FrameType type, std::string_view body);
  void send_ack(uint8_t flags);
  void pump();
  // Server: lets a held WELCOME go once there is more to send with it.
  void release_hold();
  void check_finished();
  bool on_frame(const FrameView& frame);
  bool on_control(FrameType type, std::string_view body);
  void on_welcome(std::string_view body);
  void on_challenge(std::string_view body);
  void on_resumed(std::string_view body);
  void on_refuse(std::string_view body);
  void on_data(std::string_view body);
  void on_ack(std::string_view body);
  void on_fin(std::string_view body);
  void on_abort(std::string_view body);
  void end_aborted(std::string error);
  void apply_peer_position(uint64_t received, uint64_t limit);

  SessionConfig config_;
  Role role_;
  State state_;
  std::string error_;
  std::string id_;
  std::string secret_;  // chosen by the client, sent in its HELLO
  // Client: a HELLO with this id went on a carrier, so later carriers resume
  // (the server may hold the session; if it does not, nothing of it was
  // delivered and it starts over).
  bool hello_sent_ = false;
  std::string proof_key_;

  // The current carrier.
  bool has_carrier_ = false;
  bool carrier_failed_ = false;
  ControlAuth auth_;
  FrameDecoder decoder_;
  OutputQueue out_;
  std::string client_nonce_;
  std::string server_nonce_;
  Instant last_received_;
  Instant last_sent_;
  // Server: the WELCOME waits for reply bytes until then (welcome_hold).
  std::optional<Instant> hold_until_;
  size_t welcome_bytes_ = 0;

  // Sending direction.
  SessionSender sender_;
  bool fin_ack_told_ = false;  // this carrier carried our kFinAcked
  bool peer_done_ = false;     // the peer said kFinAcked
  bool ack_request_outstanding_ = false;
  std::optional<AbortReason> abort_requested_;  // abort() waits for the session to flow

  // Receiving direction.
  SessionReceiver receiver_;

  // Time and reconnection.
  Instant now_;
  std::optional<Instant> disconnected_since_;
  ReconnectBackoff backoff_;
  Instant next_attempt_;
  bool passive_ = false;
  BlockedTimer write_blocked_;
  BlockedTimer read_blocked_;
  std::deque<std::string> seen_nonces_;  // server: client nonces of past resumes

  SessionStats stats_;
};

const char* to_string(Session::State state);

}  // namespace tinytcp::session

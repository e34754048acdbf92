#pragma once

// SessionAcceptor: the server end of robust sessions, sans-I/O. Carriers
// (connections the owner accepted) arrive before anyone knows which session
// they belong to; the acceptor runs the handshake on each: a HELLO makes a new
// Session, a RESUME + PROOF moves an existing one onto the carrier (closing
// the one it had). After that the carrier's bytes go to and from its Session.
//
// The owner: reports accepted carriers, their input and their loss; writes
// carrier_output(id) to each; handles next_event() after every call:
//   SessionOpened   a new session: connect its forward target;
//   SessionResumed  a session moved to a new carrier (informational);
//   CloseCarrier    close that carrier (after writing what carrier_output
//                   still holds, a REFUSE, if it can), then on_carrier_lost;
//   SessionFinished both directions closed and acknowledged;
//   SessionFailed   the session is gone (expired, failed): release its target.
//   SessionAborted  reset by either end (ABORT): reset its target.
// Session pointers are valid until the next tick() after SessionFailed, or
// until finished_linger after SessionFinished; look them up by handle.
//
// Bounded: max_sessions, max_pending_carriers, handshake_timeout and
// idle_session_lifetime (SessionConfig); each refusal is counted. A HELLO
// names its session (the client picks id and secret), so a session whose
// WELCOME was lost is resumed like any other: there are no orphans. Finished and aborted
// sessions kept for finished_linger give their place to new ones first.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "session/acceptor_stats.hh"
#include "session/control_auth.hh"
#include "session/frame_codec.hh"
#include "session/session.hh"
#include "session/session_config.hh"
#include "util/time.hh"

namespace tinytcp::session {

class SessionAcceptor {
 public:
  using CarrierId = uint64_t;      // the owner's handle for an accepted carrier
  using SessionHandle = uint64_t;  // ours for a session, never reused

  struct Event {
    enum class Kind {
      SessionOpened,
      SessionResumed,
      CloseCarrier,
      SessionFinished,
      SessionFailed,
      SessionAborted,
    };
    Kind kind;
    SessionHandle session = 0;  // 0: none (a carrier refused before it had a session)
    CarrierId carrier = 0;
    std::string reason;  // CloseCarrier, SessionFailed
  };

  explicit SessionAcceptor(SessionConfig config);

  void on_carrier_accepted(CarrierId carrier, Instant now);
  void on_carrier_input(CarrierId carrier, std::string_view bytes, Instant now);
  void on_carrier_lost(CarrierId carrier, Instant now);
  // What goes on the carrier next, a piece at a time (Session::carrier_output),
  // or up to `max` pieces in order for one gather write.
  std::string_view carrier_output(CarrierId carrier) const;
  size_t carrier_output_pieces(CarrierId carrier, std::string_view* pieces, size_t max) const;
  void consume_carrier_output(CarrierId carrier, size_t n);

  std::optional<Event> next_event();

  // The session a carrier carries (nullptr while it handshakes).
  Session* session_of(CarrierId carrier);
  Session* session(SessionHandle handle);
  // Sessions the owner should look at after writing to them.
  template <typename F>
  void for_each_session(F&& f) {
    for (auto& [handle, entry] : sessions_) {
      f(handle, *entry.session);
    }
  }

  void tick(Instant now);
  std::optional<Instant> next_deadline() const;

  const AcceptorStats& stats() const { return stats_; }
  size_t session_count() const { return sessions_.size(); }
  size_t pending_count() const { return pending_.size(); }

 private:
  struct Pending {
    enum class Stage { AwaitHello, AwaitProof, Refused };
    Stage stage = Stage::AwaitHello;
    FrameDecoder decoder;
    std::string out;
    size_t out_pos = 0;
    ControlAuth auth;
    SessionHandle session = 0;
    std::string client_nonce;
    std::string server_nonce;
    Instant accepted_at;
  };
  struct Entry {
    std::unique_ptr<Session> session;
    std::optional<CarrierId> carrier;
    bool reported_end = false;
    Instant ended_at;
    Instant expires_at;  // its key in expiry_, once its end is reported
  };
  using Sessions = std::map<SessionHandle, Entry>;

  bool on_pending_frame(CarrierId carrier, Pending& p, const FrameView& frame, Instant now);
  bool on_hello(CarrierId carrier, Pending& p, std::string_view body, Instant now);
  bool on_resume(CarrierId carrier, Pending& p, std::string_view body);
  bool on_proof(CarrierId carrier, Pending& p, std::string_view body, Instant now);
  void refuse(CarrierId carrier, Pending& p, RefuseReason reason, AcceptorDrop drop);
  void drop_pending(CarrierId carrier, AcceptorDrop drop);
  void bind(CarrierId carrier, SessionHandle handle);
  // Events and bookkeeping after a session may have changed.
  void check_session(SessionHandle handle, Instant now);
  // Makes room for a new session by forgetting the finished session that
  // ended first; false when none has finished.
  bool evict_finished();
  void close_carrier(CarrierId carrier, SessionHandle handle, std::string reason);
  // Keeps awake_ true to the entry: an ended session without a carrier rests.
  void update_awake(SessionHandle handle, const Entry& entry);
  // Forgets a session (closing its carrier, if it has one).
  void forget(Sessions::iterator it);

  SessionConfig config_;
  std::map<CarrierId, Pending> pending_;
  std::map<CarrierId, SessionHandle> bound_;
  Sessions sessions_;
  std::map<std::string, SessionHandle> by_id_;
  // The sessions tick() and next_deadline() look at: all but the ended ones
  // without a carrier, which only wait out finished_linger. At hundreds of
  // short connections a second those outnumber the live ones a hundredfold,
  // and a pass over them per event-loop turn cost the tunnel server more than
  // the sessions' own work (docs/session.md, "Per-connection cost").
  std::set<SessionHandle> awake_;
  // Ended sessions in the order they go: (expires_at, handle).
  std::set<std::pair<Instant, SessionHandle>> expiry_;
  std::deque<Event> events_;
  SessionHandle next_handle_ = 1;
  Instant now_;
  AcceptorStats stats_;
};

}  // namespace tinytcp::session

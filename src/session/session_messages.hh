#pragma once

// The bodies of the session layer's control frames (frame_codec.hh has the
// framing, docs/session.md the table). Each is a plain struct with encode()
// and a parse that returns nullopt for a body of the wrong size: all fields
// are fixed-size, so a body is valid exactly when its length is right.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tinytcp::session {

// 2: the client picks the session id and secret and sends them in its HELLO,
// so it may send DATA right behind it (docs/session.md, "Opening").
constexpr uint8_t kSessionVersion = 2;
// What a client may send before it hears the server's receive limit (data
// behind its HELLO): every server accepts at least this much at the open.
constexpr uint64_t kInitialLimit = 64 * 1024;

enum class RefuseReason : uint8_t {
  UnknownSession = 1,  // no such session (closed, expired or never made)
  BadProof = 2,        // the resume proof did not verify
  ReplayedResume = 3,  // a client nonce this session has seen before
  BadVersion = 4,      // HELLO of a version we do not speak
  Busy = 5,            // too many sessions
  BadMac = 6,          // a handshake frame failed its PSK MAC
  Failed = 7,          // the session failed and is gone
  Aborted = 8,         // the session was aborted (its ABORT may have been lost)
  SessionExists = 9,   // HELLO with an id the server already holds (a guess, or a bug)
};
const char* to_string(RefuseReason reason);

// Why an end aborted its session (ABORT): what a TCP RST would have meant.
enum class AbortReason : uint8_t {
  Application = 1,  // the application gave the connection up
  Reset = 2,        // the application's own connection was reset
  Refused = 3,      // the connection the session stands for was refused (tt-tunnel's target)
  Unreachable = 4,  // ... could not be reached (no route, timed out)
};
const char* to_string(AbortReason reason);

// HELLO: the client's new session, its id and secret chosen by the client.
struct HelloMessage {
  uint8_t version = kSessionVersion;
  uint8_t flags = 0;  // bit 0: the client has a PSK
  std::string session_id;
  std::string secret;
  std::string client_nonce;
  uint64_t limit = 0;  // the client's receive limit: the server may send bytes [0, limit)
};
// WELCOME: the server took the session.
struct WelcomeMessage {
  std::string server_nonce;
  uint64_t limit = 0;
};
struct ResumeMessage {
  std::string session_id;
  std::string client_nonce;
};
struct ChallengeMessage {
  std::string server_nonce;
};
// PROOF (client) and RESUMED (server): the sender's received position (data
// bytes, +1 once the peer's FIN is in), its receive limit, its proof.
struct ProofMessage {
  uint64_t received = 0;
  uint64_t limit = 0;
  std::string proof;
};
// ACK: also the heartbeat.
struct AckMessage {
  static constexpr uint8_t kReplyRequested = 1;
  // The sender's FIN is acknowledged and it has the peer's: the last word of
  // a session, which lets the client close (docs/session.md, closing).
  static constexpr uint8_t kFinAcked = 2;
  uint64_t received = 0;
  uint64_t limit = 0;
  uint8_t flags = 0;
};
struct FinMessage {
  uint64_t position = 0;  // total data bytes of the sender's stream
};
struct RefuseMessage {
  RefuseReason reason = RefuseReason::UnknownSession;
};
struct AbortMessage {
  AbortReason reason = AbortReason::Application;
};

std::string encode(const HelloMessage& m);
std::string encode(const WelcomeMessage& m);
std::string encode(const ResumeMessage& m);
std::string encode(const ChallengeMessage& m);
std::string encode(const ProofMessage& m);
std::string encode(const AckMessage& m);
std::string encode(const FinMessage& m);
std::string encode(const RefuseMessage& m);
std::string encode(const AbortMessage& m);

std::optional<HelloMessage> parse_hello(std::string_view body);
std::optional<WelcomeMessage> parse_welcome(std::string_view body);
std::optional<ResumeMessage> parse_resume(std::string_view body);
std::optional<ChallengeMessage> parse_challenge(std::string_view body);
std::optional<ProofMessage> parse_proof(std::string_view body);
std::optional<AckMessage> parse_ack(std::string_view body);
std::optional<FinMessage> parse_fin(std::string_view body);
std::optional<RefuseMessage> parse_refuse(std::string_view body);
std::optional<AbortMessage> parse_abort(std::string_view body);

}  // namespace tinytcp::session

#pragma once

// ControlAuth: the MACs on control frames of one carrier when the two ends
// share a pre-shared key (SessionConfig::psk); without one it passes bodies
// through unchanged. Every control frame (all but DATA) then ends in a 32-byte
// HMAC-SHA-256 over (direction, per-direction counter, type, body), under
//   - HELLO and RESUME: HMAC(psk, "hs c2s"); the server's answer (WELCOME,
//     CHALLENGE, REFUSE before it) HMAC(psk, "hs s2c" || client nonce);
//   - then client->server HMAC(psk, "ctl c2s" || client nonce), which the
//     client knows before the server answers (its frames may follow the HELLO
//     at once), and server->client, once the server has answered,
//     HMAC(psk, "ctl s2c" || client nonce || server nonce).
// Counters make a replayed or reordered control frame fail; fresh nonces on
// each carrier make frames of one carrier useless on another (a client's
// frames after a RESUME count only after a PROOF bound to the server's fresh
// nonce; after a HELLO, a replay of the HELLO is refused: its id is taken).
//
// Also here: the resume proofs (docs/session.md): HMAC-SHA-256 under the
// session secret (mixed with the PSK when there is one) over the transcript.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "session/frame_codec.hh"

namespace tinytcp::session {

constexpr size_t kSessionIdBytes = 16;
constexpr size_t kSecretBytes = 32;
constexpr size_t kNonceBytes = 16;
constexpr size_t kMacBytes = 32;

class ControlAuth {
 public:
  // No PSK: seal() and open() pass bodies through.
  ControlAuth() = default;
  ControlAuth(std::string psk, bool is_client);

  bool enabled() const { return enabled_; }
  // The client's nonce is known and its HELLO or RESUME sealed/opened:
  // the server->client handshake key and the client->server carrier key.
  void set_client_nonce(std::string_view client_nonce);
  // The server's nonce is known too (WELCOME or CHALLENGE): the
  // server->client carrier key.
  void set_server_nonce(std::string_view server_nonce);

  // The body to send for a control frame of `type` (body + MAC when enabled).
  std::string seal(FrameType type, std::string_view body);
  // The body without its MAC, or nullopt when the MAC is missing or wrong.
  std::optional<std::string_view> open(FrameType type, std::string_view body);
  // Bytes seal() adds.
  size_t overhead() const { return enabled_ ? kMacBytes : 0; }

 private:
  std::string mac(const std::string& key, char direction, uint64_t counter, FrameType type,
                  std::string_view body) const;

  bool enabled_ = false;
  bool is_client_ = false;
  std::string psk_;
  std::string client_nonce_;
  std::string c2s_key_;
  std::string s2c_key_;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
};

// Compares in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

// The key resume proofs are made with: the session secret, or with a PSK
// HMAC(psk, "proof" || secret), so seeing the secret on the wire is not enough.
std::string proof_key(std::string_view secret, const std::optional<std::string>& psk);

// HMAC-SHA-256(key, role || id || client nonce || server nonce || received ||
// limit): `client` true for the client's proof, false for the server's.
std::string resume_proof(std::string_view key, bool client, std::string_view session_id,
                         std::string_view client_nonce, std::string_view server_nonce,
                         uint64_t received, uint64_t limit);

}  // namespace tinytcp::session

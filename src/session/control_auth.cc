#include "session/control_auth.hh"

#include "util/hash.hh"

namespace tinytcp::session {

namespace {

std::string hmac(std::string_view key, std::string_view data) {
  const auto d = hmac_sha256(key, data);
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

void append_u64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

}  // namespace

ControlAuth::ControlAuth(std::string psk, bool is_client)
    : enabled_(true), is_client_(is_client), psk_(std::move(psk)) {
  c2s_key_ = hmac(psk_, "tinytcp-session hs c2s");
}

void ControlAuth::set_client_nonce(std::string_view client_nonce) {
  client_nonce_ = std::string(client_nonce);
  if (enabled_) {
    s2c_key_ = hmac(psk_, "tinytcp-session hs s2c" + client_nonce_);
    c2s_key_ = hmac(psk_, "tinytcp-session ctl c2s" + client_nonce_);
  }
}

void ControlAuth::set_server_nonce(std::string_view server_nonce) {
  if (!enabled_) {
    return;
  }
  s2c_key_ = hmac(psk_, "tinytcp-session ctl s2c" + client_nonce_ + std::string(server_nonce));
}

std::string ControlAuth::mac(const std::string& key, char direction, uint64_t counter,
                             FrameType type, std::string_view body) const {
  std::string data;
  data.reserve(10 + body.size());
  data.push_back(direction);
  append_u64(data, counter);
  data.push_back(static_cast<char>(type));
  data.append(body);
  return hmac(key, data);
}

std::string ControlAuth::seal(FrameType type, std::string_view body) {
  if (!enabled_) {
    return std::string(body);
  }
  const char direction = is_client_ ? 'c' : 's';
  const std::string& key = is_client_ ? c2s_key_ : s2c_key_;
  return std::string(body) + mac(key, direction, sent_++, type, body);
}

std::optional<std::string_view> ControlAuth::open(FrameType type, std::string_view body) {
  if (!enabled_) {
    return body;
  }
  const std::string& key = is_client_ ? s2c_key_ : c2s_key_;
  if (body.size() < kMacBytes || key.empty()) {
    return std::nullopt;
  }
  const auto payload = body.substr(0, body.size() - kMacBytes);
  const char direction = is_client_ ? 's' : 'c';
  if (!constant_time_equal(mac(key, direction, received_, type, payload),
                           body.substr(payload.size()))) {
    return std::nullopt;
  }
  ++received_;
  return payload;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  unsigned diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned>(static_cast<uint8_t>(a[i]) ^ static_cast<uint8_t>(b[i]));
  }
  return diff == 0;
}

std::string proof_key(std::string_view secret, const std::optional<std::string>& psk) {
  if (!psk) {
    return std::string(secret);
  }
  return hmac(*psk, "tinytcp-session proof" + std::string(secret));
}

std::string resume_proof(std::string_view key, bool client, std::string_view session_id,
                         std::string_view client_nonce, std::string_view server_nonce,
                         uint64_t received, uint64_t limit) {
  std::string data = client ? "tinytcp-session client proof" : "tinytcp-session server proof";
  data.append(session_id);
  data.append(client_nonce);
  data.append(server_nonce);
  append_u64(data, received);
  append_u64(data, limit);
  return hmac(key, data);
}

}  // namespace tinytcp::session

#include "session/session_messages.hh"

#include "session/control_auth.hh"
#include "util/buffer.hh"

namespace tinytcp::session {

const char* to_string(RefuseReason reason) {
  switch (reason) {
    case RefuseReason::UnknownSession:
      return "unknown session";
    case RefuseReason::BadProof:
      return "bad resume proof";
    case RefuseReason::ReplayedResume:
      return "replayed resume";
    case RefuseReason::BadVersion:
      return "unsupported version";
    case RefuseReason::Busy:
      return "server busy";
    case RefuseReason::BadMac:
      return "bad MAC (wrong key?)";
    case RefuseReason::Failed:
      return "session failed";
    case RefuseReason::Aborted:
      return "session aborted";
    case RefuseReason::SessionExists:
      return "session id in use";
  }
  return "unknown reason";
}

const char* to_string(AbortReason reason) {
  switch (reason) {
    case AbortReason::Application:
      return "closed by the application";
    case AbortReason::Reset:
      return "connection reset";
    case AbortReason::Refused:
      return "connection refused";
    case AbortReason::Unreachable:
      return "unreachable";
  }
  return "unknown reason";
}

namespace {

class Out {
 public:
  Out& u8(uint8_t v) {
    s_.push_back(static_cast<char>(v));
    return *this;
  }
  Out& u64(uint64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      s_.push_back(static_cast<char>((v >> shift) & 0xff));
    }
    return *this;
  }
  Out& bytes(std::string_view v) {
    s_.append(v);
    return *this;
  }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
};

uint64_t read_u64(BufferReader& r) {
  const uint64_t hi = r.u32();
  return (hi << 32) | r.u32();
}

// The whole body was read, exactly.
bool whole(const BufferReader& r) {
  return r.ok() && r.remaining() == 0;
}

}  // namespace

std::string encode(const HelloMessage& m) {
  return Out()
      .u8(m.version)
      .u8(m.flags)
      .bytes(m.session_id)
      .bytes(m.secret)
      .bytes(m.client_nonce)
      .u64(m.limit)
      .take();
}
std::string encode(const WelcomeMessage& m) {
  return Out().bytes(m.server_nonce).u64(m.limit).take();
}
std::string encode(const ResumeMessage& m) {
  return Out().bytes(m.session_id).bytes(m.client_nonce).take();
}
std::string encode(const ChallengeMessage& m) {
  return m.server_nonce;
}
std::string encode(const ProofMessage& m) {
  return Out().u64(m.received).u64(m.limit).bytes(m.proof).take();
}
std::string encode(const AckMessage& m) {
  return Out().u64(m.received).u64(m.limit).u8(m.flags).take();
}
std::string encode(const FinMessage& m) {
  return Out().u64(m.position).take();
}
std::string encode(const RefuseMessage& m) {
  return Out().u8(static_cast<uint8_t>(m.reason)).take();
}
std::string encode(const AbortMessage& m) {
  return Out().u8(static_cast<uint8_t>(m.reason)).take();
}

std::optional<HelloMessage> parse_hello(std::string_view body) {
  BufferReader r(body);
  HelloMessage m;
  m.version = r.u8();
  m.flags = r.u8();
  m.session_id = std::string(r.bytes(kSessionIdBytes));
  m.secret = std::string(r.bytes(kSecretBytes));
  m.client_nonce = std::string(r.bytes(kNonceBytes));
  m.limit = read_u64(r);
  return whole(r) ? std::optional(m) : std::nullopt;
}
std::optional<WelcomeMessage> parse_welcome(std::string_view body) {
  BufferReader r(body);
  WelcomeMessage m;
  m.server_nonce = std::string(r.bytes(kNonceBytes));
  m.limit = read_u64(r);
  return whole(r) ? std::optional(m) : std::nullopt;
}
std::optional<ResumeMessage> parse_resume(std::string_view body) {
  BufferReader r(body);
  ResumeMessage m;
  m.session_id = std::string(r.bytes(kSessionIdBytes));
  m.client_nonce = std::string(r.bytes(kNonceBytes));
  return whole(r) ? std::optional(m) : std::nullopt;
}
std::optional<ChallengeMessage> parse_challenge(std::string_view body) {
  if (body.size() != kNonceBytes) {
    return std::nullopt;
  }
  return ChallengeMessage{std::string(body)};
}
std::optional<ProofMessage> parse_proof(std::string_view body) {
  BufferReader r(body);
  ProofMessage m;
  m.received = read_u64(r);
  m.limit = read_u64(r);
  m.proof = std::string(r.bytes(kMacBytes));
  return whole(r) ? std::optional(m) : std::nullopt;
}
std::optional<AckMessage> parse_ack(std::string_view body) {
  BufferReader r(body);
  AckMessage m;
  m.received = read_u64(r);
  m.limit = read_u64(r);
  m.flags = r.u8();
  return whole(r) ? std::optional(m) : std::nullopt;
}
std::optional<FinMessage> parse_fin(std::string_view body) {
  BufferReader r(body);
  FinMessage m;
  m.position = read_u64(r);
  return whole(r) ? std::optional(m) : std::nullopt;
}
std::optional<RefuseMessage> parse_refuse(std::string_view body) {
  BufferReader r(body);
  const uint8_t reason = r.u8();
  if (!whole(r)) {
    return std::nullopt;
  }
  // An unknown reason is still a refusal: a newer peer may have more of them.
  return RefuseMessage{static_cast<RefuseReason>(reason)};
}

std::optional<AbortMessage> parse_abort(std::string_view body) {
  BufferReader r(body);
  const uint8_t reason = r.u8();
  if (!whole(r)) {
    return std::nullopt;
  }
  // An unknown reason still aborts: a newer peer may have more of them.
  return AbortMessage{static_cast<AbortReason>(reason)};
}

}  // namespace tinytcp::session

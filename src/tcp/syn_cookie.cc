#include "tcp/syn_cookie.hh"

#include <algorithm>
#include <chrono>

#include "tcp/tcp_receiver.hh"
#include "util/buffer.hh"
#include "util/hash.hh"

namespace tinytcp::tcp {

namespace {

constexpr uint32_t kHashMask = 0x00ffffff;
constexpr uint32_t kPeriodMask = 0x1f;  // 5 bits
constexpr uint32_t kTsBits = 6;
constexpr uint32_t kTsMask = (1u << kTsBits) - 1;
constexpr uint8_t kNoWindowShift = 0x0f;
constexpr uint32_t kSackBit = 0x10;
constexpr uint64_t kMaxWindowField = 0xffff;

}  // namespace

const char* to_string(CookieError e) {
  switch (e) {
    case CookieError::Expired:
      return "cookie expired";
    case CookieError::BadHash:
      return "not our cookie";
    case CookieError::kCount:
      break;
  }
  return "unknown";
}

namespace {

SipHash::Key derive_key(const std::string& key) {
  const Sha256Digest digest = sha256(key);
  SipHash::Key out{};
  std::copy_n(digest.begin(), out.size(), out.begin());
  return out;
}

}  // namespace

SynCookies::SynCookies(const std::string& key) : hash_(derive_key(key)) {}

uint32_t SynCookies::period(Instant now) {
  return static_cast<uint32_t>(now.since_epoch() / kPeriod);
}

uint8_t SynCookies::mss_index(uint16_t peer_mss) {
  uint8_t index = 0;
  for (uint8_t i = 0; i < kMssTable.size(); ++i) {
    if (kMssTable[i] <= peer_mss) {
      index = i;
    }
  }
  return index;
}

uint32_t SynCookies::hash(const CookieTuple& tuple, Wrap32 peer_isn, uint8_t mss_index,
                          uint32_t period) const {
  char input[21];
  BufferWriter out(input, sizeof(input));
  out.u32(tuple.local_ip);
  out.u16(tuple.local_port);
  out.u32(tuple.remote_ip);
  out.u16(tuple.remote_port);
  out.u32(peer_isn.raw());
  out.u32(period);
  out.u8(mss_index);
  return static_cast<uint32_t>(hash_(out.written()));
}

Wrap32 SynCookies::cookie(const CookieTuple& tuple, Wrap32 peer_isn, uint8_t mss_index,
                          uint32_t period) const {
  return Wrap32{((period & kPeriodMask) << 27) | (uint32_t{mss_index} << 24) |
                (hash(tuple, peer_isn, mss_index, period) & kHashMask)};
}

uint32_t SynCookies::encode_timestamp(uint32_t tsval_now, std::optional<uint8_t> window_shift,
                                      bool sack) {
  const uint32_t options = (window_shift ? std::min<uint8_t>(*window_shift, 14) : kNoWindowShift) |
                           (sack ? kSackBit : 0);
  uint32_t tsval = (tsval_now & ~kTsMask) | options;
  // Never ahead of the clock: the connection's later TSvals must not go
  // backwards from the one the peer saw first (RFC 7323 §5.4).
  if (static_cast<int32_t>(tsval - tsval_now) > 0) {
    tsval -= 1u << kTsBits;
  }
  return tsval;
}

TcpSegment SynCookies::syn_ack(const TcpConfig& config, const CookieTuple& tuple,
                               const TcpSegment& syn, uint32_t tsval_now, Instant now) const {
  const uint8_t index = mss_index(syn.options.mss.value_or(config.default_peer_mss));
  TcpSegment out;
  out.syn = true;
  out.ack = true;
  out.seqno = cookie(tuple, syn.seqno, index, period(now));
  out.ackno = syn.seqno + 1;
  // RFC 7323 §2.2: a SYN's window is never scaled.
  out.window = static_cast<uint16_t>(std::min(config.receive_buffer_bytes, kMaxWindowField));
  out.options.mss = config.mss;
  const bool timestamps = config.timestamps && syn.options.timestamps.has_value();
  // RFC 7323 §1.3, RFC 2018 §2: only what the SYN offered. Without
  // timestamps there is nowhere to keep window scale and SACK-permitted.
  if (timestamps) {
    const std::optional<uint8_t> peer_shift =
        config.window_scale ? syn.options.window_scale : std::nullopt;
    const bool sack = config.sack && syn.options.sack_permitted;
    out.options.timestamps =
        Timestamps{encode_timestamp(tsval_now, peer_shift, sack), syn.options.timestamps->value};
    if (peer_shift) {
      out.options.window_scale = TcpReceiver::window_shift_for(config);
    }
    out.options.sack_permitted = sack;
  }
  return out;
}

Expected<TcpSegment, CookieError> SynCookies::rebuild_syn(const CookieTuple& tuple,
                                                          const TcpSegment& ack,
                                                          Instant now) const {
  const Wrap32 peer_isn = ack.seqno - 1;
  const uint32_t value = (ack.ackno - 1).raw();
  const uint32_t cookie_period = value >> 27;
  const auto index = static_cast<uint8_t>((value >> 24) & 0x7);
  const uint32_t current = period(now);
  // The full period whose low 5 bits the cookie holds: this one or the one
  // before (a cookie is good for 64 to 128 s).
  std::optional<uint32_t> full;
  for (uint32_t age = 0; age <= 1 && age <= current; ++age) {
    if (((current - age) & kPeriodMask) == cookie_period) {
      full = current - age;
    }
  }
  if (!full) {
    return make_unexpected(CookieError::Expired);
  }
  if ((hash(tuple, peer_isn, index, *full) & kHashMask) != (value & kHashMask)) {
    return make_unexpected(CookieError::BadHash);
  }
  TcpSegment syn;
  syn.syn = true;
  syn.seqno = peer_isn;
  syn.options.mss = kMssTable[index];
  if (ack.options.timestamps) {
    const uint32_t options = ack.options.timestamps->echo_reply & kTsMask;
    const auto shift = static_cast<uint8_t>(options & 0x0f);
    if (shift != kNoWindowShift) {
      syn.options.window_scale = shift;
    }
    syn.options.sack_permitted = (options & kSackBit) != 0;
    syn.options.timestamps = Timestamps{ack.options.timestamps->value, 0};
  }
  return syn;
}

}  // namespace tinytcp::tcp

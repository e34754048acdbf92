#include "tcp/path_mss.hh"

namespace tinytcp::tcp {

namespace {

// RFC 7323 §3.2: timestamps take 10 option bytes, 12 with the NOP padding
// every implementation sends; they reduce the payload of every segment.
constexpr uint32_t kTimestampOptionBytes = 12;
// IPv4 and TCP headers without options; the least MTU believed (Linux's
// min_pmtu); the MSS steps of black-hole detection (RFC 4821 §7.2's base of
// 1024, then RFC 9293's default 536).
constexpr uint32_t kIpv4TcpHeaderBytes = 40;
constexpr uint32_t kMinPathMtu = 552;
constexpr uint32_t kBlackHoleMss = 1024;
constexpr uint32_t kFloorMss = 536;

uint32_t effective_mss(uint16_t ours, uint16_t theirs, bool timestamps) {
  uint32_t mss = std::min(ours, theirs);
  if (timestamps && mss > kTimestampOptionBytes + 1) {
    mss -= kTimestampOptionBytes;
  }
  return std::max<uint32_t>(mss, 1);
}

}  // namespace

uint32_t PathMss::initial_smss(const TcpConfig& config) {
  return effective_mss(config.mss, config.default_peer_mss, false);
}

void PathMss::update_smss(SendState& s) const {
  const auto ours =
      static_cast<uint16_t>(std::min<uint32_t>(s.config.mss, path_mss_.value_or(0xffff)));
  s.smss = effective_mss(ours, s.peer.mss, s.peer.timestamps);
  s.cc->set_mss(s.smss);
  s.board.set_smss(s.smss);
}

bool PathMss::lower(SendState& s, uint32_t mss, Instant now) {
  if (mss >= segment_room(s)) {
    return false;  // RFC 1191 §3: only ever lowered here
  }
  path_mss_ = mss;
  lowered_at_ = now;
  update_smss(s);
  const uint32_t fits = s.new_segment_payload();
  for (size_t i = 0; i < s.board.size(); ++i) {
    const OutstandingSegment& seg = s.board[i];
    if (seg.length - (seg.syn ? 1u : 0u) - (seg.fin ? 1u : 0u) > fits) {
      s.board.mark_lost_by_time(i);
    }
  }
  return true;
}

bool PathMss::on_path_mtu(SendState& s, uint32_t mtu, Instant now) {
  // RFC 1191 §3 allows down to 68; Linux stops at min_pmtu 552: an ICMP
  // claiming less is more likely an attack than a path.
  const uint32_t mss = std::max(mtu, kMinPathMtu) - kIpv4TcpHeaderBytes;
  if (!lower(s, mss, now)) {
    return false;
  }
  ++s.stats.path_mtu_updates;
  return true;
}

bool PathMss::on_timeout(SendState& s, Instant now) {
  if (s.config.black_hole_timeouts == 0 || !s.syn_acked() ||
      s.consecutive_retransmissions % s.config.black_hole_timeouts != 0) {
    return false;
  }
  const uint32_t room = segment_room(s);
  const uint32_t step = room > kBlackHoleMss ? kBlackHoleMss : kFloorMss;
  const OutstandingSegment& head = s.board.front();
  const uint32_t payload = head.length - (head.fin ? 1u : 0u);
  if (room <= kFloorMss || payload + (room - s.smss) <= step) {
    return false;  // already small, or the segment would fit the next step anyway
  }
  if (!lower(s, step, now)) {
    return false;
  }
  ++s.stats.black_hole_mss_reductions;
  return true;
}

bool PathMss::expire(SendState& s, Instant now) {
  if (!path_mss_ || s.config.path_mtu_expiry <= Duration::zero() ||
      now - lowered_at_ < s.config.path_mtu_expiry) {
    return false;
  }
  const uint32_t before = s.smss;
  path_mss_.reset();
  update_smss(s);
  ++s.stats.path_mtu_raises;
  return s.smss > before;
}

}  // namespace tinytcp::tcp

#include "tcp/congestion/congestion_control.hh"

#include <algorithm>

#include <fmt/format.h>

#include "tcp/congestion/bbr.hh"
#include "tcp/congestion/cubic.hh"
#include "tcp/congestion/fixed_window.hh"
#include "tcp/congestion/new_reno.hh"
#include "tcp/congestion/reno.hh"

namespace tinytcp::tcp {

namespace {

constexpr uint64_t kMaxFixedSegments = 1'000'000;

std::optional<uint64_t> parse_count(std::string_view digits) {
  if (digits.empty() || digits.size() > 7) {
    return std::nullopt;
  }
  uint64_t n = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

}  // namespace

double window_after_idle(double cwnd, double iw, Duration idle, Duration rto) {
  if (rto <= Duration::zero() || idle <= rto) {
    return cwnd;  // RFC 5681 §4.1: only an idle period longer than the RTO
  }
  const double restart = std::min(iw, cwnd);  // RW = min(IW, cwnd)
  double window = cwnd;
  // One halving per RTO beyond the first (Linux: while ((delta -= rto) > 0 &&
  // cwnd > restart_cwnd) cwnd >>= 1).
  for (Duration left = idle - rto; left > Duration::zero() && window > restart; left -= rto) {
    window /= 2;
  }
  return std::max(window, restart);
}

Expected<std::unique_ptr<CongestionControl>, std::string> make_congestion_control(
    std::string_view spec, const CongestionParams& params) {
  std::unique_ptr<CongestionControl> cc;
  if (spec == "reno") {
    cc = std::make_unique<Reno>(params);
  } else if (spec == "newreno") {
    cc = std::make_unique<NewReno>(params);
  } else if (spec == "cubic") {
    cc = std::make_unique<Cubic>(params);
  } else if (spec == "bbr") {
    cc = std::make_unique<Bbr>(params);
  } else if (spec.substr(0, 6) == "fixed:") {
    const auto n = parse_count(spec.substr(6));
    if (!n || *n == 0 || *n > kMaxFixedSegments) {
      return make_unexpected(
          fmt::format("bad congestion control '{}': fixed:N needs a segment count N in 1..{}", spec,
                      kMaxFixedSegments));
    }
    cc = std::make_unique<FixedWindow>(params, static_cast<uint32_t>(*n));
  } else {
    return make_unexpected(fmt::format(
        "unknown congestion control '{}' (expected reno, newreno, cubic, bbr or fixed:N)", spec));
  }
  return cc;
}

}  // namespace tinytcp::tcp

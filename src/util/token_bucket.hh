#pragma once

// TokenBucket: a rate limit of `rate` events per second with bursts of up to
// `burst`, refilled from the `now` the caller passes in (the core reads no
// clock). It starts full. Used for ICMP and ICMPv6 errors (RFC 1812
// §4.3.2.8, RFC 4443 §2.4(f)).

#include <algorithm>

#include "util/time.hh"

namespace tinytcp {

class TokenBucket {
 public:
  TokenBucket(double rate_per_second, double burst)
      : rate_(rate_per_second), burst_(burst), tokens_(burst) {}

  // Takes one token if there is one; a refused event takes none.
  bool take(Instant now) {
    if (refilled_once_) {
      tokens_ = std::min(burst_, tokens_ + to_seconds(now - last_refill_) * rate_);
    }
    last_refill_ = now;
    refilled_once_ = true;
    if (tokens_ < 1.0) {
      return false;
    }
    tokens_ -= 1.0;
    return true;
  }

 private:
  double rate_;
  double burst_;
  double tokens_;
  Instant last_refill_;
  bool refilled_once_ = false;
};

}  // namespace tinytcp

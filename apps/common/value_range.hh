#pragma once

// Ranges of sizes and gaps on the command line of tt-perf: "1460" (one value)
// or "200-399" (each draw uniform over both ends, inclusive); gaps take a
// unit, "2-19ms" or "500us-2ms" (us, ms, s). One error line for the user.

#include <cstdint>
#include <string>
#include <string_view>

#include "util/expected.hh"
#include "util/random.hh"
#include "util/time.hh"

namespace tinytcp::apps {

struct SizeRange {
  uint64_t low = 0;
  uint64_t high = 0;
  uint64_t draw(Rng& rng) const { return low == high ? low : rng.uniform(low, high); }
};

struct DurationRange {
  Duration low{};
  Duration high{};
  Duration draw(Rng& rng) const;
};

// "N" or "LOW-HIGH", LOW <= HIGH, both within [min, max]; the error names `flag`.
Expected<SizeRange, std::string> parse_size_range(std::string_view text, std::string_view flag,
                                                  uint64_t min, uint64_t max);
// "Du", "LOW-HIGHu" or "LOWu-HIGHu" with u one of us, ms, s; at most 1 hour.
Expected<DurationRange, std::string> parse_duration_range(std::string_view text,
                                                          std::string_view flag);

}  // namespace tinytcp::apps

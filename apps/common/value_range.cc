#include "common/value_range.hh"

#include <charconv>
#include <optional>

#include <fmt/format.h>

namespace tinytcp::apps {

namespace {

std::optional<uint64_t> parse_number(std::string_view text) {
  uint64_t value = 0;
  if (text.empty()) {
    return std::nullopt;
  }
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// The unit at the end of `text` ("us", "ms", "s") in microseconds, and the
// text without it; 0 when there is none.
uint64_t split_unit(std::string_view& text) {
  const auto ends_with = [&](std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
  };
  for (const auto& [suffix, micros] :
       {std::pair<std::string_view, uint64_t>{"us", 1}, {"ms", 1000}, {"s", 1000000}}) {
    if (ends_with(suffix)) {
      text.remove_suffix(suffix.size());
      return micros;
    }
  }
  return 0;
}

constexpr uint64_t kMaxMicros = 3600ULL * 1000000;

}  // namespace

Duration DurationRange::draw(Rng& rng) const {
  if (low == high) {
    return low;
  }
  const auto lo =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(low).count());
  const auto hi =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(high).count());
  return std::chrono::duration_cast<Duration>(
      std::chrono::nanoseconds(static_cast<int64_t>(rng.uniform(lo, hi))));
}

Expected<SizeRange, std::string> parse_size_range(std::string_view text, std::string_view flag,
                                                  uint64_t min, uint64_t max) {
  const auto bad = [&] {
    return make_unexpected(
        fmt::format("{} {}: expected N or LOW-HIGH, each in {}..{}", flag, text, min, max));
  };
  const size_t dash = text.find('-');
  const auto low = parse_number(text.substr(0, dash));
  const auto high = dash == std::string_view::npos ? low : parse_number(text.substr(dash + 1));
  if (!low || !high || *low > *high || *low < min || *high > max) {
    return bad();
  }
  return SizeRange{*low, *high};
}

Expected<DurationRange, std::string> parse_duration_range(std::string_view text,
                                                          std::string_view flag) {
  const auto bad = [&] {
    return make_unexpected(fmt::format(
        "{} {}: expected a duration or LOW-HIGH with a unit (us, ms, s), e.g. 2-19ms", flag, text));
  };
  const size_t dash = text.find('-');
  std::string_view low_text = text.substr(0, dash);
  std::string_view high_text = dash == std::string_view::npos ? low_text : text.substr(dash + 1);
  const uint64_t high_unit = split_unit(high_text);
  uint64_t low_unit = dash == std::string_view::npos ? high_unit : split_unit(low_text);
  if (dash == std::string_view::npos) {
    low_text = high_text;
  }
  if (high_unit == 0) {
    return bad();
  }
  if (low_unit == 0) {
    low_unit = high_unit;  // "2-19ms": the unit of the upper end
  }
  const auto low = parse_number(low_text);
  const auto high = parse_number(high_text);
  if (!low || !high || *low > kMaxMicros / low_unit || *high > kMaxMicros / high_unit) {
    return bad();
  }
  const uint64_t low_micros = *low * low_unit;
  const uint64_t high_micros = *high * high_unit;
  if (low_micros > high_micros) {
    return bad();
  }
  return DurationRange{
      std::chrono::duration_cast<Duration>(std::chrono::microseconds(low_micros)),
      std::chrono::duration_cast<Duration>(std::chrono::microseconds(high_micros))};
}

}  // namespace tinytcp::apps

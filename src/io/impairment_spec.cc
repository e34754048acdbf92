#include "io/impairment_spec.hh"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

namespace tinytcp::io {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) {
      return parts;
    }
    start = at + 1;
  }
}

// A plain decimal number, all of `text` (no sign, no exponent, no spaces).
std::optional<double> number(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return std::nullopt;
  }
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// Splits "20ms" into 20 and "ms".
std::pair<std::string_view, std::string_view> value_and_unit(std::string_view text) {
  const size_t unit = text.find_first_not_of("0123456789.");
  if (unit == std::string_view::npos) {
    return {text, {}};
  }
  return {text.substr(0, unit), text.substr(unit)};
}

std::optional<double> probability(std::string_view text) {
  double scale = 1.0;
  if (!text.empty() && text.back() == '%') {
    text.remove_suffix(1);
    scale = 0.01;
  }
  const auto v = number(text);
  if (!v || *v * scale > 1.0) {
    return std::nullopt;
  }
  return *v * scale;
}

std::optional<Duration> duration(std::string_view text) {
  const auto [digits, unit] = value_and_unit(text);
  const auto v = number(digits);
  double ns_per_unit = 0;
  if (unit == "ns") {
    ns_per_unit = 1;
  } else if (unit == "us") {
    ns_per_unit = 1e3;
  } else if (unit == "ms") {
    ns_per_unit = 1e6;
  } else if (unit == "s") {
    ns_per_unit = 1e9;
  }
  if (!v || ns_per_unit == 0 || *v * ns_per_unit > 1e15) {  // at most ~11 days
    return std::nullopt;
  }
  return Duration(static_cast<int64_t>(std::llround(*v * ns_per_unit)));
}

std::optional<uint64_t> rate(std::string_view text) {
  const auto [digits, unit] = value_and_unit(text);
  const auto v = number(digits);
  double scale = 0;
  if (unit == "bit") {
    scale = 1;
  } else if (unit == "kbit") {
    scale = 1e3;
  } else if (unit == "mbit") {
    scale = 1e6;
  } else if (unit == "gbit") {
    scale = 1e9;
  }
  if (!v || scale == 0 || *v * scale < 1 || *v * scale > 1e13) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(std::llround(*v * scale));
}

std::optional<uint64_t> count(std::string_view text, bool allow_suffix) {
  uint64_t scale = 1;
  if (allow_suffix && !text.empty() && (text.back() == 'k' || text.back() == 'm')) {
    scale = text.back() == 'k' ? 1024 : 1024 * 1024;
    text.remove_suffix(1);
  }
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != text.npos) {
    return std::nullopt;
  }
  return std::strtoull(std::string(text).c_str(), nullptr, 10) * scale;
}

// The shortest text that reads back as `v`, in the plain decimal form that
// number() accepts: fmt's shortest round-trip digits, with an exponent
// ("1e-52") written out as leading zeros, so tiny probabilities stay readable.
std::string plain_decimal(double v) {
  const std::string shortest = fmt::format("{}", v);
  const size_t e = shortest.find('e');
  if (e == std::string::npos) {
    return shortest;
  }
  std::string digits;
  for (const char ch : shortest.substr(0, e)) {
    if (ch != '.') {
      digits += ch;
    }
  }
  const int exponent = std::atoi(shortest.c_str() + e + 1);
  if (exponent < 0) {
    return "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  }
  const auto whole = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= whole) {
    return digits + std::string(whole - digits.size(), '0');
  }
  return digits.substr(0, whole) + "." + digits.substr(whole);
}

std::string format_duration(Duration d) {
  const int64_t ns = d.count();
  if (ns % 1'000'000'000 == 0) {
    return fmt::format("{}s", ns / 1'000'000'000);
  }
  if (ns % 1'000'000 == 0) {
    return fmt::format("{}ms", ns / 1'000'000);
  }
  if (ns % 1'000 == 0) {
    return fmt::format("{}us", ns / 1'000);
  }
  return fmt::format("{}ns", ns);
}

}  // namespace

Expected<ImpairmentConfig, std::string> parse_impairment(std::string_view spec) {
  ImpairmentConfig c;
  if (spec.empty()) {
    return c;
  }
  std::set<std::string_view> seen;
  for (const std::string_view item : split(spec, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return make_unexpected(fmt::format("'{}': expected key=value", item));
    }
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    if (!seen.insert(key).second) {
      return make_unexpected(fmt::format("'{}' given twice", key));
    }
    const auto bad = [&] { return make_unexpected(fmt::format("bad value in '{}'", item)); };
    if (key == "loss" || key == "duplicate" || key == "corrupt" || key == "reorder") {
      const auto p = probability(value);
      if (!p) {
        return bad();
      }
      (key == "loss"        ? c.loss
       : key == "duplicate" ? c.duplicate
       : key == "corrupt"   ? c.corrupt
                            : c.reorder) = *p;
    } else if (key == "delay" || key == "jitter" || key == "reorder-delay") {
      const auto d = duration(value);
      if (!d) {
        return bad();
      }
      (key == "delay" ? c.delay : key == "jitter" ? c.jitter : c.reorder_delay) = *d;
    } else if (key == "rate") {
      const auto r = rate(value);
      if (!r) {
        return bad();
      }
      c.rate_bits_per_second = *r;
    } else if (key == "rate-queue" || key == "hold") {
      const auto n = count(value, key == "rate-queue");
      if (!n || *n == 0) {
        return bad();
      }
      (key == "hold" ? c.hold_limit_packets : c.rate_queue_limit_bytes) = *n;
    } else if (key == "burst") {
      const auto parts = split(value, '/');
      if (parts.size() != 2 && parts.size() != 4) {
        return bad();
      }
      std::vector<double> ps;
      for (const auto part : parts) {
        const auto p = probability(part);
        if (!p) {
          return bad();
        }
        ps.push_back(*p);
      }
      GilbertElliott ge{ps[0], ps[1], 0.0, 1.0};
      if (ps.size() == 4) {
        ge.loss_in_good = ps[2];
        ge.loss_in_bad = ps[3];
      }
      c.burst = ge;
    } else {
      return make_unexpected(fmt::format("unknown impairment '{}'", key));
    }
  }
  if (c.burst && c.loss > 0.0) {
    return make_unexpected(std::string("give loss or burst, not both"));
  }
  return c;
}

std::string format_impairment(const ImpairmentConfig& c) {
  std::vector<std::string> items;
  const ImpairmentConfig defaults;
  const auto p = [](double v) { return plain_decimal(v); };
  if (c.loss > 0.0) {
    items.push_back("loss=" + p(c.loss));
  }
  if (c.burst) {
    items.push_back(fmt::format("burst={}/{}/{}/{}", p(c.burst->good_to_bad),
                                p(c.burst->bad_to_good), p(c.burst->loss_in_good),
                                p(c.burst->loss_in_bad)));
  }
  if (c.duplicate > 0.0) {
    items.push_back("duplicate=" + p(c.duplicate));
  }
  if (c.corrupt > 0.0) {
    items.push_back("corrupt=" + p(c.corrupt));
  }
  if (c.rate_bits_per_second > 0) {
    items.push_back(fmt::format("rate={}bit", c.rate_bits_per_second));
  }
  if (c.rate_queue_limit_bytes != defaults.rate_queue_limit_bytes) {
    items.push_back(fmt::format("rate-queue={}", c.rate_queue_limit_bytes));
  }
  if (c.delay > Duration::zero()) {
    items.push_back("delay=" + format_duration(c.delay));
  }
  if (c.jitter > Duration::zero()) {
    items.push_back("jitter=" + format_duration(c.jitter));
  }
  if (c.reorder > 0.0) {
    items.push_back("reorder=" + p(c.reorder));
  }
  if (c.reorder_delay != defaults.reorder_delay) {
    items.push_back("reorder-delay=" + format_duration(c.reorder_delay));
  }
  if (c.hold_limit_packets != defaults.hold_limit_packets) {
    items.push_back(fmt::format("hold={}", c.hold_limit_packets));
  }
  return fmt::format("{}", fmt::join(items, ","));
}

}  // namespace tinytcp::io

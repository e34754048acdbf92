#include "common/receiver_limits.hh"

#include <cctype>
#include <string>

#include <fmt/format.h>

namespace tinytcp::apps {

namespace {

// "30d", "12h", "90m", "45s", "3600": seconds, or an error message.
std::string parse_duration(const std::string& text, std::chrono::seconds& out) {
  size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(text, &used);
  } catch (const std::exception&) {
    return fmt::format("'{}' is not a duration (e.g. 7d, 12h, 30m, 3600)", text);
  }
  if (!text.empty() && text[0] == '-') {
    return fmt::format("'{}' is negative", text);
  }
  const std::string unit = text.substr(used);
  unsigned long long scale = 1;
  if (unit == "d") {
    scale = 86400;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "m") {
    scale = 60;
  } else if (!unit.empty() && unit != "s") {
    return fmt::format("'{}': the unit must be s, m, h or d", text);
  }
  constexpr unsigned long long kMax = 100ull * 365 * 86400;
  if (n > kMax / scale) {
    return fmt::format("'{}' is longer than a hundred years", text);
  }
  out = std::chrono::seconds(static_cast<int64_t>(n * scale));
  return {};
}

}  // namespace

void ReceiverLimits::apply(proto::ReceiverPolicy& policy) const {
  policy.max_files = max_files;
  policy.max_session_bytes = max_session_bytes == 0 ? UINT64_MAX : max_session_bytes;
  policy.free_space_reserve = free_space_reserve;
  policy.max_refusals_in_a_row = max_refusals;
}

void add_receiver_limit_flags(CLI::App& app, ReceiverLimits& limits) {
  app.add_option("--max-files", limits.max_files,
                 "Entries (files and directories, refused ones too) one session may offer")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-session-bytes", limits.max_session_bytes,
                 "File bytes one session may bring, e.g. 10G (default and 0: no limit)")
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--free-reserve", limits.free_space_reserve,
                 "Free space to leave on the output file system, e.g. 1G (default 64M)")
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--max-refusals", limits.max_refusals,
                 "Give a session up after this many offers in a row were not taken")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--partial-ttl",
         [&limits](const std::string& text) {
           std::chrono::seconds ttl{};
           if (const std::string error = parse_duration(text, ttl); !error.empty()) {
             throw CLI::ValidationError("--partial-ttl", error);
           }
           limits.partial_ttl = ttl;
         },
         "Remove partial files untouched for this long, e.g. 7d (default), 12h; 0: keep them")
      ->type_name("DURATION");
}

}  // namespace tinytcp::apps

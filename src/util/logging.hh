#pragma once

// Logging setup for apps and tests: spdlog to stderr. Library code logs with
// SPDLOG_DEBUG/spdlog::warn and never configures sinks itself.

#include <string_view>

namespace tinytcp {

// verbosity: -1 quiet (errors only), 0 default (info), 1 debug, 2+ trace.
void setup_logging(int verbosity);

}  // namespace tinytcp

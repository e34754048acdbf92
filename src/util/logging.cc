#include "util/logging.hh"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace tinytcp {

void setup_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("tinytcp");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%H:%M:%S.%e %^%l%$ %v");
  if (verbosity < 0) {
    spdlog::set_level(spdlog::level::err);
  } else if (verbosity == 0) {
    spdlog::set_level(spdlog::level::info);
  } else if (verbosity == 1) {
    spdlog::set_level(spdlog::level::debug);
  } else {
    spdlog::set_level(spdlog::level::trace);
  }
}

}  // namespace tinytcp

#pragma once

// --version for every app: prints "NAME 0.1.0 (REVISION)" (tinytcp::version()
// and the git revision it was built from, util/version.hh) on stdout and
// exits 0, before any other option is checked (also in an app that catches
// CLI11's ParseError itself). help2man reads the same line
// for the manual pages.

#include <string_view>

#include <CLI/CLI.hpp>

namespace tinytcp::apps {

void add_version_flag(CLI::App& app, std::string_view name);

}  // namespace tinytcp::apps

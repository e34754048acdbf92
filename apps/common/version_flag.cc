#include "common/version_flag.hh"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/version.hh"

namespace tinytcp::apps {

void add_version_flag(CLI::App& app, std::string_view name) {
  // Printed and exited here rather than through CLI11's CallForVersion, so an
  // app that turns every ParseError into an error line still exits 0.
  const std::string line = version_line(name);
  app.add_flag_callback(
         "--version",
         [line] {
           std::printf("%s\n", line.c_str());
           std::fflush(stdout);
           std::exit(0);
         },
         "Print the version and exit")
      ->configurable(false);
}

}  // namespace tinytcp::apps

#include "common/version_flag.hh"

#include "util/version.hh"

namespace tinytcp::apps {

void add_version_flag(CLI::App& app, std::string_view name) {
  app.set_version_flag("--version", version_line(name), "Print the version and exit");
}

}  // namespace tinytcp::apps

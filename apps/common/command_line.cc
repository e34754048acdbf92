#include "common/command_line.hh"

#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace tinytcp::apps {

void describe_exit_statuses(CLI::App& app, const std::vector<ExitStatus>& statuses,
                            std::string_view preface) {
  std::string text(preface);
  if (!text.empty()) {
    text += "\n\n";
  }
  text += "Exit status:";
  for (const ExitStatus& s : statuses) {
    text += fmt::format("\n  {:<3} {}", s.code, s.meaning);
  }
  app.footer(text);
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, std::string_view name) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    // CLI11's messages may span lines (a list of choices): one line here.
    for (char& c : what) {
      if (c == '\n' || c == '\r') {
        c = ' ';
      }
    }
    std::fprintf(stderr, "%.*s: %s (see %.*s --help)\n", static_cast<int>(name.size()), name.data(),
                 what.c_str(), static_cast<int>(name.size()), name.data());
    return kBadArguments;
  }
  return std::nullopt;
}

}  // namespace tinytcp::apps

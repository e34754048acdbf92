#pragma once

// The command line of every app, handled one way: a bad argument is one line
// on stderr ("NAME: what is wrong (see NAME --help)") and exit status 1, the
// status each app uses for "bad arguments or local error", never CLI11's own
// two lines and private codes (105-114); --help prints the options and then
// the exit statuses the app documents (and help2man puts in its manual page).

#include <optional>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace tinytcp::apps {

// The status a bad argument exits with, in every app.
inline constexpr int kBadArguments = 1;

// One exit status an app documents.
struct ExitStatus {
  int code = 0;
  std::string_view meaning;
};

// Sets the --help epilog: `preface` (may be empty), then "Exit status:" and
// one line per status.
void describe_exit_statuses(CLI::App& app, const std::vector<ExitStatus>& statuses,
                            std::string_view preface = {});

// Parses argv into `app`. Returns nullopt when the app goes on, or the status
// to exit with now: 0 after --help (printed on stdout), kBadArguments after a
// bad argument (one line on stderr, named `name`).
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, std::string_view name);

}  // namespace tinytcp::apps

#include "util/version.hh"

#include "util/version_revision.hh"

namespace tinytcp {

std::string_view version() {
  return TINYTCP_VERSION_STRING;
}

std::string_view revision() {
  return TINYTCP_REVISION;
}

std::string version_line(std::string_view program) {
  std::string line(program);
  line += ' ';
  line += version();
  if (!revision().empty()) {
    line += " (";
    line += revision();
    line += ')';
  }
  return line;
}

}  // namespace tinytcp

#pragma once

// The release of tinytcp a program runs: the library's version (semantic
// versioning of the public API, docs/library.md) and, when it was built from
// a git checkout, the revision. Every app prints both for --version
// (apps/common/version_flag.hh); an embedder can compare version() with the
// TINYTCP_VERSION_* macros of the headers it compiled against.

#include <string>
#include <string_view>

#include "util/version_number.hh"

namespace tinytcp {

// "0.1.0": project(VERSION) of the top-level CMakeLists.txt.
std::string_view version();
// `git describe --always --dirty` at configure time ("38b25d1-dirty", or a
// tag such as "v0.1.0-3-g38b25d1"); empty when not built from a checkout.
std::string_view revision();
// "NAME 0.1.0 (38b25d1)", or "NAME 0.1.0" without a revision.
std::string version_line(std::string_view program);

}  // namespace tinytcp

#include "util/version.hh"

#include <string>

#include <gtest/gtest.h>

namespace tinytcp {
namespace {

TEST(VersionTest, VersionIsTheHeaderNumbers) {
  const std::string numbers = std::to_string(TINYTCP_VERSION_MAJOR) + "." +
                              std::to_string(TINYTCP_VERSION_MINOR) + "." +
                              std::to_string(TINYTCP_VERSION_PATCH);
  EXPECT_EQ(version(), numbers);
  EXPECT_EQ(version(), TINYTCP_VERSION_STRING);
}

TEST(VersionTest, LineNamesProgramVersionAndRevision) {
  const std::string line = version_line("webget");
  const std::string start = "webget " + std::string(version());
  if (revision().empty()) {
    EXPECT_EQ(line, start);
  } else {
    EXPECT_EQ(line, start + " (" + std::string(revision()) + ")");
  }
}

}  // namespace
}  // namespace tinytcp

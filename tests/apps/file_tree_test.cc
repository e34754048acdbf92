// scan_tree and PosixFileSource together (issue 21 item 6): a file of a
// scanned tree that is swapped for a symlink or for another file before it
// is opened is refused, never read.

#include "common/file_tree.hh"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "common/posix_file.hh"

namespace tinytcp::apps {
namespace {

namespace fs = std::filesystem;

class FileTreeTest : public ::testing::Test {
 protected:
  FileTreeTest() {
    char tmpl[] = "/tmp/tt-tree-test.XXXXXX";
    root_ = ::mkdtemp(tmpl);
    fs::create_directories(root_ / "tree" / "sub");
    write(root_ / "tree" / "sub" / "file", "the scanned file");
    write(root_ / "secret", "must never be sent");
  }
  ~FileTreeTest() override { fs::remove_all(root_); }

  static void write(const fs::path& p, const std::string& data) {
    std::ofstream(p, std::ios::binary) << data;
  }

  const TreeEntry& entry(const TreeScan& scan, const std::string& path) {
    for (const auto& e : scan.entries) {
      if (e.path == path) {
        return e;
      }
    }
    throw std::runtime_error("no entry " + path);
  }

  static std::optional<FileIdentity> identity(const TreeEntry& e) {
    return FileIdentity{e.device, e.inode};
  }

  static std::string read_all(PosixFileSource& source) {
    std::string out(source.size(), '\0');
    const auto got = source.read(0, out.data(), out.size());
    return got ? out.substr(0, *got) : std::string();
  }

  fs::path root_;
};

TEST_F(FileTreeTest, UnchangedFileOpens) {
  const auto scan = scan_tree((root_ / "tree").string(), "tree");
  const auto& e = entry(scan, "tree/sub/file");
  PosixFileSource source(e.source, identity(e));
  EXPECT_EQ(read_all(source), "the scanned file");
}

TEST_F(FileTreeTest, FileSwappedForASymlinkIsRefused) {
  const auto scan = scan_tree((root_ / "tree").string(), "tree");
  const auto& e = entry(scan, "tree/sub/file");
  fs::remove(e.source);
  fs::create_symlink(root_ / "secret", e.source);
  EXPECT_THROW(PosixFileSource(e.source, identity(e)), std::runtime_error);
}

TEST_F(FileTreeTest, FileReplacedByAnotherIsRefused) {
  const auto scan = scan_tree((root_ / "tree").string(), "tree");
  const auto& e = entry(scan, "tree/sub/file");
  fs::copy_file(root_ / "secret", root_ / "tree" / "replacement");
  fs::rename(root_ / "tree" / "replacement", e.source);
  EXPECT_THROW(PosixFileSource(e.source, identity(e)), std::runtime_error);
}

TEST_F(FileTreeTest, DirectoryAboveSwappedForASymlinkIsRefused) {
  const auto scan = scan_tree((root_ / "tree").string(), "tree");
  const auto& e = entry(scan, "tree/sub/file");
  fs::create_directories(root_ / "elsewhere");
  write(root_ / "elsewhere" / "file", "another file, same name");
  fs::rename(root_ / "tree" / "sub", root_ / "tree" / "old-sub");
  fs::create_directory_symlink(root_ / "elsewhere", root_ / "tree" / "sub");
  EXPECT_THROW(PosixFileSource(e.source, identity(e)), std::runtime_error);
}

}  // namespace
}  // namespace tinytcp::apps

#include "common/file_tree.hh"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "proto/transfer_messages.hh"

namespace tinytcp::apps {

namespace fs = std::filesystem;

namespace {

void scan(const fs::path& dir, const std::string& prefix, TreeScan& out) {
  std::error_code ec;
  std::vector<fs::path> children;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    children.push_back(it->path());
  }
  if (ec) {
    out.errors.push_back(fmt::format("cannot list {}: {}", dir.string(), ec.message()));
    return;
  }
  std::sort(children.begin(), children.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string() < b.filename().string();
  });
  for (const auto& child : children) {
    const std::string name = child.filename().string();
    const std::string path = prefix + "/" + name;
    const auto status = fs::symlink_status(child, ec);
    if (ec) {
      out.errors.push_back(fmt::format("cannot stat {}: {}", child.string(), ec.message()));
      continue;
    }
    if (fs::is_symlink(status)) {
      out.skipped.push_back(fmt::format("skipping symlink {}", child.string()));
      continue;
    }
    if (!fs::is_directory(status) && !fs::is_regular_file(status)) {
      out.skipped.push_back(fmt::format("skipping special file {}", child.string()));
      continue;
    }
    if (!proto::is_safe_path(path)) {
      out.errors.push_back(fmt::format(
          "cannot send {}: the name has a control character or backslash, or the path is "
          "too long or too deep for the protocol",
          child.string()));
      continue;
    }
    struct stat st {};
    if (::lstat(child.c_str(), &st) != 0) {
      out.errors.push_back(fmt::format("cannot stat {}: {}", child.string(), std::strerror(errno)));
      continue;
    }
    const bool directory = fs::is_directory(status);
    out.entries.push_back(TreeEntry{directory ? path + "/" : path, child.string(), directory,
                                    static_cast<uint64_t>(st.st_dev),
                                    static_cast<uint64_t>(st.st_ino)});
    if (directory) {
      scan(child, path, out);
    }
  }
}

}  // namespace

TreeScan scan_tree(const std::string& dir, const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw std::runtime_error(fmt::format("{} is not a directory", dir));
  }
  fs::directory_iterator probe(dir, ec);
  if (ec) {
    throw std::runtime_error(fmt::format("cannot list {}: {}", dir, ec.message()));
  }
  if (!proto::is_safe_path(root) || proto::is_directory_path(root)) {
    throw std::runtime_error(
        fmt::format("cannot send {} under the name '{}' (give --name NAME)", dir, root));
  }
  TreeScan out;
  out.entries.push_back(TreeEntry{root + "/", dir, true});
  scan(dir, root, out);
  return out;
}

}  // namespace tinytcp::apps

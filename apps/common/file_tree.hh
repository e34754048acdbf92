#pragma once

// Lists what `file-send DIR` offers: every directory and regular file under
// DIR, depth first, each directory's entries in byte order of their names,
// as relative paths that begin with the root's name. Symlinks are never
// followed and, like sockets, FIFOs and devices, are skipped with a warning;
// a name the protocol cannot carry (a control character, a backslash, over
// the length or depth limits of proto::is_safe_path) is an error, reported
// and left out, so the sender never offers a path the receiver must refuse.

#include <cstdint>
#include <string>
#include <vector>

namespace tinytcp::apps {

struct TreeEntry {
  std::string path;    // relative, '/'-separated; a directory's ends in '/'
  std::string source;  // where to read it here
  bool directory = false;
  // What the scan found at `source` (lstat): a file is sent only if it is
  // still that file when it is opened (PosixFileSource's `expected`).
  uint64_t device = 0;
  uint64_t inode = 0;
};

struct TreeScan {
  std::vector<TreeEntry> entries;
  std::vector<std::string> skipped;  // one warning line each (symlinks, special files)
  std::vector<std::string> errors;   // one line each (unreadable, unsendable names)
};

// `root` is the first component of every path (file-send: DIR's base name or
// --name). Throws std::runtime_error when `dir` cannot be listed at all.
TreeScan scan_tree(const std::string& dir, const std::string& root);

}  // namespace tinytcp::apps

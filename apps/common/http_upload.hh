#pragma once

// HttpUpload: the body of one HTTP PUT on its way into the served directory.
// It is written to a temporary file of its own, ".NAME.upload.<random>",
// created with O_CREAT|O_EXCL|O_NOFOLLOW beside the target (so two PUTs of
// one name never share a file, and nothing planted at a predictable name is
// followed), then commit() fsyncs it and renames it over NAME. The file
// descriptor is owned once; an upload that is not committed (refused, failed,
// the connection reset) removes its temporary file when destroyed.

#include <cstdint>
#include <string>
#include <string_view>

#include "io/file_descriptor.hh"

namespace tinytcp::apps {

class HttpUpload {
 public:
  // `dir` (not owned) must outlive the upload; `name` a safe base name.
  HttpUpload(int dir, std::string name);
  ~HttpUpload();
  HttpUpload(const HttpUpload&) = delete;
  HttpUpload& operator=(const HttpUpload&) = delete;

  // Creates the temporary file; false (errno set) when it cannot.
  bool open();
  // Appends `data`; false (errno set) on a write error.
  bool write(std::string_view data);
  // fsync, close, rename over the name; false (errno set) on failure, and the
  // temporary file is gone either way.
  bool commit();

  uint64_t bytes() const { return bytes_; }
  const std::string& temp_name() const { return temp_; }

 private:
  void discard();

  int dir_;
  std::string name_;
  std::string temp_;
  io::FileDescriptor file_;
  uint64_t bytes_ = 0;
};

}  // namespace tinytcp::apps

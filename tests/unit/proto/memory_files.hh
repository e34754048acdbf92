#pragma once

// In-memory FileSource and FileSink for the file-transfer protocol's tests.

#include <map>
#include <optional>
#include <set>
#include <string>

#include "proto/file_source.hh"
#include "proto/transfer_messages.hh"

namespace tinytcp::proto {

class MemorySource : public FileSource {
 public:
  explicit MemorySource(std::string data) : data_(std::move(data)) {}
  uint64_t size() const override { return data_.size(); }
  Expected<size_t, std::string> read(uint64_t offset, char* out, size_t n) override {
    if (fail_at_ && offset >= *fail_at_) {
      return make_unexpected(std::string("injected read error"));
    }
    if (offset >= data_.size()) {
      return size_t{0};
    }
    const size_t k = std::min<size_t>(n, data_.size() - offset);
    data_.copy(out, k, offset);
    return k;
  }
  std::optional<uint64_t> fail_at_;

 private:
  std::string data_;
};

// A directory in memory: final files, and partial files keyed by name+hash.
class MemorySink : public FileSink {
 public:
  bool exists(std::string_view name) override {
    return files.count(std::string(name)) > 0 || dirs.count(std::string(name)) > 0;
  }
  std::optional<uint64_t> existing_size(std::string_view path) override {
    const auto it = files.find(std::string(path));
    return it == files.end() ? std::nullopt : std::optional<uint64_t>(it->second.size());
  }
  Expected<Sha256Digest, std::string> hash_existing(std::string_view path) override {
    ++hashed_existing;
    return sha256(files.at(std::string(path)));
  }
  Expected<bool, std::string> make_directory(std::string_view path) override {
    std::string at;
    for (const auto part : split_path(path)) {
      at += (at.empty() ? "" : "/") + std::string(part);
      if (files.count(at) > 0) {
        return make_unexpected(at + " is not a directory");
      }
      dirs.insert(at);
    }
    return true;
  }
  uint64_t free_space() override { return free; }
  Expected<PartialFile, std::string> open(std::string_view name, const Sha256Digest& sha) override {
    current_ = std::string(name) + "." + to_hex(sha);
    current_name_ = std::string(name);
    return PartialFile{partials[current_].size()};
  }
  Expected<bool, std::string> hash_prefix(uint64_t n, ContentHash& hash) override {
    if (unreadable_prefix) {
      return make_unexpected(std::string("Input/output error"));
    }
    hash.update(std::string_view(partials[current_]).substr(0, n));
    return true;
  }
  Expected<bool, std::string> truncate(uint64_t n) override {
    partials[current_].resize(n);
    return true;
  }
  Expected<bool, std::string> write(std::string_view data) override {
    auto& p = partials[current_];
    if (write_limit && p.size() + data.size() > *write_limit) {
      const size_t fits = *write_limit > p.size() ? *write_limit - p.size() : 0;
      p.append(data.substr(0, fits));
      return make_unexpected(std::string("No space left on device"));
    }
    p.append(data);
    return true;
  }
  Expected<bool, std::string> commit() override {
    files[current_name_] = partials[current_];
    partials.erase(current_);
    return true;
  }
  void discard() override { partials.erase(current_); }

  std::map<std::string, std::string> files;
  std::map<std::string, std::string> partials;
  std::set<std::string> dirs;
  int hashed_existing = 0;
  uint64_t free = UINT64_MAX;
  std::optional<uint64_t> write_limit;
  bool unreadable_prefix = false;  // hash_prefix fails (a read error)

 private:
  std::string current_;
  std::string current_name_;
};

}  // namespace tinytcp::proto

#pragma once

// Which receiving session is writing which file, so that two sessions never
// write into the same partial file or race for the same final name.
//
// A session claims a name when it opens the file's partial file, and gives it
// up when the file is committed or discarded, or the session ends. A claim
// on a name another session holds is refused ("busy"), unless the holder's
// sender is on the same machine (the same IP address): then it is the same
// sender starting over after it was killed or lost its link, and the new
// session takes the name over at once: the holder lets go of the file first
// (its pending writes finish and its partial file is closed, kept for the
// resume) and fails with "taken over by a newer session from the same
// sender". A new session so never waits for the old one's idle timeout.
//
// ClaimingFileSink puts the claims in front of a PosixFileSink. Single
// threaded, like the event loop that runs the sessions.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/posix_file.hh"
#include "proto/file_source.hh"
#include "stack/ip_address.hh"

namespace tinytcp::apps {

class ClaimingFileSink;

class NameClaims {
 public:
  // Claims `name` for `sink`, taking it over from a holder on the same
  // address; false (with the reason) when another machine's session holds it.
  Expected<bool, std::string> claim(const std::string& name, ClaimingFileSink& sink);
  void release(const std::string& name, const ClaimingFileSink& sink);
  size_t size() const { return holders_.size(); }
  uint64_t refused() const { return refused_; }
  uint64_t taken_over() const { return taken_over_; }

 private:
  std::map<std::string, ClaimingFileSink*, std::less<>> holders_;
  uint64_t refused_ = 0;
  uint64_t taken_over_ = 0;
};

class ClaimingFileSink final : public proto::FileSink {
 public:
  // `peer_address`: the IP address of this session's sender.
  ClaimingFileSink(NameClaims& claims, std::unique_ptr<proto::FileSink> inner,
                   const stack::IpAddress& peer_address);
  ~ClaimingFileSink() override;
  ClaimingFileSink(const ClaimingFileSink&) = delete;
  ClaimingFileSink& operator=(const ClaimingFileSink&) = delete;

  const stack::IpAddress& peer_address() const { return peer_address_; }
  // True once a newer session from the same sender took a name over from us.
  bool taken_over() const { return taken_over_; }
  // Called by NameClaims: lets go of the file now (pending writes finish, the
  // partial file is closed and kept) and refuses everything afterwards.
  void let_go();

  bool exists(std::string_view path) override;
  std::optional<uint64_t> existing_size(std::string_view path) override;
  Expected<Sha256Digest, std::string> hash_existing(std::string_view path) override;
  Expected<bool, std::string> make_directory(std::string_view path) override;
  uint64_t free_space() override;
  Expected<proto::PartialFile, std::string> open(std::string_view path,
                                                 const Sha256Digest& file_id) override;
  Expected<bool, std::string> hash_prefix(uint64_t n, proto::ContentHash& hash) override;
  Expected<bool, std::string> truncate(uint64_t n) override;
  Expected<bool, std::string> write(std::string_view data) override;
  Expected<bool, std::string> commit() override;
  void discard() override;

 private:
  static constexpr const char* kTakenOver = "taken over by a newer session from the same sender";
  void release_claim();

  NameClaims& claims_;
  std::unique_ptr<proto::FileSink> inner_;
  stack::IpAddress peer_address_;
  std::string claimed_;  // the name held, empty: none
  bool taken_over_ = false;
};

}  // namespace tinytcp::apps

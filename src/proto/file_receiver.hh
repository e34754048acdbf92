#pragma once

// FileReceiver: the receiving side of the file-transfer protocol as a sans-I/O
// state machine. It validates each OFFER (safe relative path, no overwrite
// without `force`, size limit, free space), creates directory entries, offers
// to resume from the bytes a partial file already holds (or to confirm an
// identical file already in place), writes file bytes through a FileSink while
// hashing them, and commits the file under its final name only when the
// SHA-256 of the whole file matches.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/content_hash.hh"
#include "proto/file_source.hh"
#include "proto/transfer_messages.hh"

namespace tinytcp::proto {

struct ReceiverPolicy {
  bool force = false;  // overwrite an existing file
  uint64_t max_size = UINT64_MAX;
};

class FileReceiver {
 public:
  enum class State {
    AwaitOffer,
    AwaitStart,
    Receiving,
    AwaitTrailer,
    Closed,  // BYE received
    Failed,  // protocol error: drop the stream
  };

  struct FileOutcome {
    std::string name;  // the offered path
    bool directory = false;
    bool already_present = false;  // an identical file was in place; left untouched
    uint64_t size = 0;
    uint64_t resumed_from = 0;
    uint64_t bytes_received = 0;  // file bytes received in this session
    bool ok = false;
    std::string error;      // one line when !ok
    Sha256Digest sha256{};  // of the bytes received, once the TRAILER came
  };

  // `hash` (not owned, outliving the receiver) computes the files' SHA-256;
  // null: an InlineContentHash of its own.
  FileReceiver(FileSink& sink, ReceiverPolicy policy, ContentHash* hash = nullptr)
      : sink_(sink), policy_(policy), hash_(hash != nullptr ? *hash : inline_hash_) {}

  void on_input(std::string_view data);
  std::string_view output() const { return std::string_view(out_).substr(out_pos_); }
  void consume_output(size_t n);

  State state() const { return state_; }
  const std::string& error() const { return error_; }
  // One entry per file offered in this session, in order.
  const std::vector<FileOutcome>& files() const { return files_; }
  // Bytes of the current file received so far (for progress).
  uint64_t position() const { return position_; }

 private:
  void on_message(const Message& m);
  void on_offer(const Offer& offer);
  void on_start(const Start& start);
  void on_trailer(const Trailer& trailer);
  void on_decline();
  void on_directory(const Offer& offer);
  void offer_existing(const Offer& offer);
  void reject(RejectReason reason, std::string message);
  void write_error(const std::string& what);
  void fail(std::string error);

  FileSink& sink_;
  ReceiverPolicy policy_;
  State state_ = State::AwaitOffer;
  std::string error_;
  FrameDecoder decoder_;
  std::string out_;
  size_t out_pos_ = 0;

  Offer offer_;
  uint64_t held_ = 0;
  bool confirming_ = false;  // the offer is for the existing file below
  Sha256Digest existing_sha256_{};
  uint64_t position_ = 0;
  InlineContentHash inline_hash_;
  ContentHash& hash_;
  std::vector<FileOutcome> files_;
};

}  // namespace tinytcp::proto

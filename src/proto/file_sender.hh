#pragma once

// FileSender: the sending side of the file-transfer protocol
// (proto/transfer_messages.hh) as a sans-I/O state machine. The driver moves
// bytes: it writes `output()` to the stream (then `consume_output(n)`), feeds
// what the peer sends to `on_input()`, and calls `finish_stream()` when it
// has offered every file. The sender reads file bytes through a FileSource
// only as fast as the stream takes them.
//
// One session may carry many files and directory entries: after each one the
// sender is Idle again (whether the receiver took it, refused it or found a
// mismatch) and the next offer() may follow. Only a broken stream, a write
// error at the receiver or a local read error leave it Failed.

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/content_hash.hh"
#include "proto/file_source.hh"
#include "proto/transfer_messages.hh"

namespace tinytcp::proto {

class FileSender {
 public:
  enum class State {
    Idle,         // ready for offer() or finish_stream()
    Offering,     // OFFER written, waiting for ACCEPT/REJECT
    Sending,      // file bytes flowing
    AwaitResult,  // TRAILER written, waiting for RESULT
    Closed,       // BYE written
    Failed,
  };

  struct Outcome {
    bool ok = false;
    bool already_present = false;  // the receiver held an identical file
    uint64_t resumed_from = 0;     // bytes the receiver already held and kept
    uint64_t bytes_sent = 0;       // file bytes sent in this session
    std::string error;             // one line for the user when !ok
    std::optional<RejectReason> rejected;
    std::optional<ResultStatus> result;
    Sha256Digest sha256{};  // of the whole file, once sent
  };

  // `hash` (not owned, outliving the sender) computes the files' SHA-256;
  // null: an InlineContentHash of its own.
  explicit FileSender(ContentHash* hash = nullptr)
      : hash_(hash != nullptr ? *hash : inline_hash_) {}
  FileSender(const FileSender&) = delete;
  FileSender& operator=(const FileSender&) = delete;

  // Offers a file at the relative path `name` under `file_id`
  // (proto::Offer::file_id). Its SHA-256 is computed from the bytes as they
  // are sent. If the receiver already has a file of that size there, it is
  // confirmed when `confirm_identical` and its SHA-256 equals ours, and
  // refused (Exists) otherwise.
  void offer(FileSource& source, std::string name, const Sha256Digest& file_id,
             bool confirm_identical = false);
  // Offers a directory entry (`path` ends in '/'): the receiver creates it.
  void offer_directory(std::string path);
  // After the last file: say goodbye.
  void finish_stream();

  // Bytes to write to the stream now (empty: nothing until more input).
  std::string_view output();
  void consume_output(size_t n);
  // Bytes the receiver sent.
  void on_input(std::string_view data);

  State state() const { return state_; }
  // The outcome of the last offered file, once known (state Idle or Failed).
  const Outcome& outcome() const { return outcome_; }
  uint64_t file_size() const { return size_; }
  uint64_t position() const { return position_; }

 private:
  void fail(std::string error);
  void on_message(const Message& m);
  void start_data(uint64_t offset);
  void refill();
  void on_accept(const Accept& accept);
  void refuse(RejectReason reason, std::string error);

  State state_ = State::Idle;
  FileSource* source_ = nullptr;
  bool directory_ = false;
  bool confirm_identical_ = false;
  bool confirming_ = false;  // the receiver has a file of this size in place
  InlineContentHash inline_hash_;
  ContentHash& hash_;  // of the file bytes [0, position_)
  uint64_t size_ = 0;
  uint64_t position_ = 0;  // next file byte to put into out_
  std::string out_;        // control frames or a chunk of file bytes
  size_t out_pos_ = 0;
  FrameDecoder decoder_;
  Outcome outcome_;
};

}  // namespace tinytcp::proto

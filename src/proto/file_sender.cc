#include "proto/file_sender.hh"

#include <fmt/format.h>

namespace tinytcp::proto {

namespace {
constexpr size_t kChunk = 256 * 1024;
}

void FileSender::offer(FileSource& source, std::string name, const Sha256Digest& file_id,
                       bool confirm_identical) {
  if (state_ != State::Idle) {
    fail("offer() while a transfer is in progress");
    return;
  }
  source_ = &source;
  directory_ = false;
  confirming_ = false;
  confirm_identical_ = confirm_identical;
  size_ = source.size();
  position_ = 0;
  outcome_ = Outcome{};
  Offer o;
  o.name = std::move(name);
  o.size = size_;
  o.file_id = file_id;
  encode(o, out_);
  state_ = State::Offering;
}

void FileSender::offer_directory(std::string path) {
  if (state_ != State::Idle) {
    fail("offer_directory() while a transfer is in progress");
    return;
  }
  source_ = nullptr;
  directory_ = true;
  confirming_ = false;
  size_ = 0;
  position_ = 0;
  outcome_ = Outcome{};
  Offer o;
  o.name = std::move(path);
  encode(o, out_);
  state_ = State::Offering;
}

void FileSender::finish_stream() {
  if (state_ != State::Idle) {
    fail("finish_stream() while a transfer is in progress");
    return;
  }
  encode(Bye{}, out_);
  state_ = State::Closed;
}

std::string_view FileSender::output() {
  if (out_pos_ == out_.size() && state_ == State::Sending) {
    refill();
  }
  return std::string_view(out_).substr(out_pos_);
}

void FileSender::consume_output(size_t n) {
  out_pos_ += std::min(n, out_.size() - out_pos_);
  if (out_pos_ == out_.size()) {
    out_.clear();
    out_pos_ = 0;
  }
}

void FileSender::refill() {
  out_.clear();
  out_pos_ = 0;
  if (position_ < size_) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, size_ - position_));
    out_.resize(n);
    const auto got = source_->read(position_, out_.data(), n);
    if (!got) {
      out_.clear();
      fail(fmt::format("cannot read the file at offset {}: {}", position_, got.error()));
      return;
    }
    if (*got == 0) {
      out_.clear();
      fail(fmt::format("the file shrank to {} bytes while being sent", position_));
      return;
    }
    out_.resize(*got);
    hash_.update(out_);
    position_ += *got;
    outcome_.bytes_sent += *got;
    return;
  }
  outcome_.sha256 = hash_.finish();
  encode(Trailer{outcome_.sha256}, out_);
  state_ = State::AwaitResult;
}

void FileSender::on_input(std::string_view data) {
  while (!data.empty() && state_ != State::Failed) {
    const size_t used = decoder_.feed(data);
    data.remove_prefix(used);
    if (auto frame = decoder_.take()) {
      if (!*frame) {
        fail(fmt::format("protocol error from the receiver: {}", to_string(frame->error())));
        return;
      }
      on_message(**frame);
    } else if (used == 0) {
      return;
    }
  }
}

void FileSender::on_message(const Message& m) {
  if (const auto* accept = std::get_if<Accept>(&m);
      accept && state_ == State::Offering && !directory_) {
    on_accept(*accept);
    return;
  }
  if (const auto* reject = std::get_if<Reject>(&m); reject && state_ == State::Offering) {
    refuse(reject->reason,
           fmt::format("receiver refused {}: {}{}{}", directory_ ? "the directory" : "the file",
                       to_string(reject->reason), reject->message.empty() ? "" : ": ",
                       reject->message));
    return;
  }
  if (const auto* result = std::get_if<Result>(&m);
      result && state_ == State::Offering && directory_) {
    outcome_.result = result->status;
    if (result->status == ResultStatus::Ok) {
      outcome_.ok = true;
      state_ = State::Idle;
      return;
    }
    fail(fmt::format("receiver reports {}", to_string(result->status)));
    return;
  }
  if (const auto* result = std::get_if<Result>(&m);
      result && (state_ == State::AwaitResult || state_ == State::Sending)) {
    outcome_.result = result->status;
    if (result->status == ResultStatus::Ok && state_ == State::AwaitResult &&
        result->received_sha256 != outcome_.sha256) {
      // "Ok" for bytes that are not ours: the file is not verified.
      outcome_.result = ResultStatus::Mismatch;
      outcome_.ok = false;
      outcome_.already_present = false;
      outcome_.error =
          fmt::format("receiver reports ok but for SHA-256 {}, not the {} we sent: not verified",
                      to_hex(result->received_sha256), to_hex(outcome_.sha256));
      state_ = State::Idle;
      return;
    }
    if (result->status == ResultStatus::Ok && state_ == State::AwaitResult) {
      outcome_.ok = true;
      state_ = State::Idle;
      return;
    }
    if (result->status == ResultStatus::Mismatch && state_ == State::AwaitResult && confirming_) {
      // The file in place is not ours (the receiver compared our TRAILER).
      outcome_.already_present = false;
      refuse(RejectReason::Exists, fmt::format("receiver refused the file: {} (and it differs)",
                                               to_string(RejectReason::Exists)));
      return;
    }
    if (result->status == ResultStatus::Mismatch && state_ == State::AwaitResult) {
      // This file is lost (the receiver discarded it); the session goes on.
      outcome_.ok = false;
      outcome_.already_present = false;
      outcome_.error = fmt::format("receiver reports {}", to_string(result->status));
      state_ = State::Idle;
      return;
    }
    fail(fmt::format("receiver reports {}", to_string(result->status)));
    return;
  }
  fail("unexpected message from the receiver");
}

void FileSender::on_accept(const Accept& accept) {
  uint64_t offset = 0;
  hash_.finish();  // start over
  if (accept.existing && !confirm_identical_) {
    encode(Decline{}, out_);
    refuse(RejectReason::Exists,
           fmt::format("receiver refused the file: {}", to_string(RejectReason::Exists)));
    return;
  }
  if (accept.existing && accept.resume_offset != size_) {
    fail("receiver offered an existing file of another size");
    return;
  }
  if (accept.resume_offset > 0 && accept.resume_offset <= size_) {
    // Resume only if the receiver's bytes are our bytes (prefix hash); the
    // whole-file hash then continues from the prefix's.
    ContentHash& prefix = hash_;
    std::string buf(kChunk, '\0');
    uint64_t at = 0;
    bool readable = true;
    while (at < accept.resume_offset) {
      const size_t n =
          static_cast<size_t>(std::min<uint64_t>(buf.size(), accept.resume_offset - at));
      const auto got = source_->read(at, buf.data(), n);
      if (!got || *got == 0) {
        readable = false;
        break;
      }
      prefix.update(std::string_view(buf).substr(0, *got));
      at += *got;
    }
    // An existing file's ACCEPT carries no digest (the receiver does not
    // tell it to any sender): confirm it blind, with the TRAILER of our
    // whole file, and let the receiver compare.
    const bool blind = accept.existing && accept.prefix_sha256 == Sha256Digest{};
    if (readable && (blind || prefix.peek() == accept.prefix_sha256)) {
      offset = accept.resume_offset;
    } else {
      hash_.finish();  // restart from 0
    }
  }
  confirming_ = accept.existing;
  if (accept.existing) {
    if (offset != size_) {
      // Another file of the same size is in place: never replaced.
      encode(Decline{}, out_);
      refuse(RejectReason::Exists, fmt::format("receiver refused the file: {} (and it differs)",
                                               to_string(RejectReason::Exists)));
      return;
    }
    outcome_.already_present = true;
  }
  start_data(offset);
}

void FileSender::refuse(RejectReason reason, std::string error) {
  outcome_.ok = false;
  outcome_.rejected = reason;
  outcome_.error = std::move(error);
  state_ = State::Idle;
}

void FileSender::start_data(uint64_t offset) {
  outcome_.resumed_from = offset;
  position_ = offset;
  encode(Start{offset}, out_);
  state_ = State::Sending;
}

void FileSender::fail(std::string error) {
  outcome_.ok = false;
  outcome_.error = std::move(error);
  state_ = State::Failed;
}

}  // namespace tinytcp::proto

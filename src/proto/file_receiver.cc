#include "proto/file_receiver.hh"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tinytcp::proto {

void FileReceiver::consume_output(size_t n) {
  out_pos_ += std::min(n, out_.size() - out_pos_);
  if (out_pos_ == out_.size()) {
    out_.clear();
    out_pos_ = 0;
  }
}

void FileReceiver::on_input(std::string_view data) {
  while (!data.empty()) {
    if (state_ == State::Receiving) {
      const uint64_t want = offer_.size - position_;
      const auto chunk = data.substr(0, static_cast<size_t>(std::min<uint64_t>(want, data.size())));
      const auto wrote = sink_.write(chunk);
      if (!wrote) {
        write_error(wrote.error());
        return;
      }
      hash_.update(chunk);
      position_ += chunk.size();
      files_.back().bytes_received += chunk.size();
      data.remove_prefix(chunk.size());
      if (position_ == offer_.size) {
        state_ = State::AwaitTrailer;
      }
      continue;
    }
    if (state_ == State::Failed || state_ == State::Closed) {
      return;  // nothing more is expected: ignore, never buffer
    }
    const size_t used = decoder_.feed(data);
    data.remove_prefix(used);
    if (auto frame = decoder_.take()) {
      if (!*frame) {
        fail(fmt::format("protocol error from the sender: {}", to_string(frame->error())));
        return;
      }
      on_message(**frame);
    } else if (used == 0) {
      return;
    }
  }
}

void FileReceiver::on_message(const Message& m) {
  if (const auto* offer = std::get_if<Offer>(&m); offer && state_ == State::AwaitOffer) {
    on_offer(*offer);
  } else if (const auto* start = std::get_if<Start>(&m); start && state_ == State::AwaitStart) {
    on_start(*start);
  } else if (const auto* trailer = std::get_if<Trailer>(&m);
             trailer && state_ == State::AwaitTrailer) {
    on_trailer(*trailer);
  } else if (std::holds_alternative<Decline>(m) && state_ == State::AwaitStart) {
    on_decline();
  } else if (std::holds_alternative<Bye>(m) && state_ == State::AwaitOffer) {
    state_ = State::Closed;
  } else {
    fail("unexpected message from the sender");
  }
}

void FileReceiver::on_offer(const Offer& offer) {
  offer_ = offer;
  confirming_ = false;
  FileOutcome outcome;
  outcome.name = offer.name;
  outcome.size = offer.size;
  outcome.directory = is_directory_path(offer.name);
  files_.push_back(outcome);
  if (offer.version != kVersion) {
    reject(RejectReason::BadVersion,
           fmt::format("version {} (we speak {})", offer.version, kVersion));
    return;
  }
  if (!is_safe_path(offer.name)) {
    reject(RejectReason::BadName,
           "paths must be relative, '/'-separated, without empty, '.' or '..' components, "
           "backslashes or control characters, and within the length and depth limits");
    return;
  }
  if (outcome.directory) {
    on_directory(offer);
    return;
  }
  if (!policy_.force && sink_.exists(offer.name)) {
    offer_existing(offer);
    return;
  }
  if (offer.size > policy_.max_size) {
    reject(RejectReason::TooLarge, fmt::format("{} > {} bytes", offer.size, policy_.max_size));
    return;
  }
  if (const auto slash = offer.name.rfind('/'); slash != std::string::npos) {
    const auto made = sink_.make_directory(std::string_view(offer.name).substr(0, slash));
    if (!made) {
      reject(RejectReason::BadDirectory, made.error());
      return;
    }
  }
  const auto partial = sink_.open(offer.name, offer.file_id);
  if (!partial) {
    reject(RejectReason::IoError, partial.error());
    return;
  }
  held_ = std::min(partial->held, offer.size);
  if (offer.size - held_ > sink_.free_space()) {
    const uint64_t free = sink_.free_space();
    if (held_ == 0) {
      sink_.discard();  // the partial file open() just created: nothing to resume from
    }
    reject(RejectReason::NoSpace,
           fmt::format("{} bytes needed, {} free", offer.size - held_, free));
    return;
  }
  hash_.finish();  // start over
  if (held_ > 0) {
    const auto hashed = sink_.hash_prefix(held_, hash_);
    if (!hashed) {
      held_ = 0;
      hash_.finish();
    }
  }
  if (held_ < partial->held) {
    // Bytes past what we offer to resume from (an unreadable prefix, or a
    // partial file longer than the file now offered) must go: the sink
    // appends, and the hash covers only what arrives from here on.
    const auto truncated = sink_.truncate(held_);
    if (!truncated) {
      reject(RejectReason::IoError, truncated.error());
      return;
    }
  }
  Accept accept;
  accept.resume_offset = held_;
  accept.prefix_sha256 = held_ > 0 ? hash_.peek() : Sha256Digest{};
  encode(accept, out_);
  state_ = State::AwaitStart;
}

void FileReceiver::on_directory(const Offer& offer) {
  if (offer.size != 0) {
    reject(RejectReason::BadName, "a directory entry has size 0");
    return;
  }
  const auto made = sink_.make_directory(offer.name);
  if (!made) {
    reject(RejectReason::BadDirectory, made.error());
    return;
  }
  files_.back().ok = true;
  Result result;
  result.status = ResultStatus::Ok;
  encode(result, out_);
}

void FileReceiver::offer_existing(const Offer& offer) {
  // Never replaced without `force`. If it has the offered size, the sender
  // may confirm it is the same file (a directory sent again after an
  // interruption skips what already arrived); otherwise it is refused.
  const auto size = sink_.existing_size(offer.name);
  if (!size || *size != offer.size) {
    reject(RejectReason::Exists, offer.name);
    return;
  }
  const auto hashed = sink_.hash_existing(offer.name);
  if (!hashed) {
    reject(RejectReason::Exists, offer.name);
    return;
  }
  confirming_ = true;
  existing_sha256_ = *hashed;
  held_ = offer.size;
  Accept accept;
  accept.resume_offset = offer.size;
  accept.prefix_sha256 = *hashed;
  accept.existing = true;
  encode(accept, out_);
  state_ = State::AwaitStart;
}

void FileReceiver::on_decline() {
  files_.back().error =
      confirming_ ? fmt::format("refused: {}: {}", to_string(RejectReason::Exists), offer_.name)
                  : std::string("declined by the sender");
  state_ = State::AwaitOffer;
}

void FileReceiver::on_start(const Start& start) {
  if (confirming_) {
    if (start.offset != offer_.size) {
      fail("the sender tried to overwrite an existing file");
      return;
    }
    position_ = start.offset;
    files_.back().resumed_from = start.offset;
    state_ = State::AwaitTrailer;
    return;
  }
  if (start.offset > held_) {
    fail(fmt::format("sender starts at {} but only {} bytes are held", start.offset, held_));
    return;
  }
  if (start.offset < held_) {
    // The sender did not recognise our bytes (or chose to restart).
    const auto truncated = sink_.truncate(start.offset);
    if (!truncated) {
      write_error(truncated.error());
      return;
    }
    hash_.finish();
    if (start.offset > 0) {
      const auto hashed = sink_.hash_prefix(start.offset, hash_);
      if (!hashed) {
        write_error(hashed.error());
        return;
      }
    }
  }
  position_ = start.offset;
  files_.back().resumed_from = start.offset;
  state_ = position_ == offer_.size ? State::AwaitTrailer : State::Receiving;
}

void FileReceiver::on_trailer(const Trailer& trailer) {
  if (confirming_) {
    // Nothing was written: the file in place stays as it is either way.
    Result result;
    result.received_sha256 = existing_sha256_;
    files_.back().sha256 = existing_sha256_;
    if (trailer.sha256 == existing_sha256_) {
      result.status = ResultStatus::Ok;
      files_.back().ok = true;
      files_.back().already_present = true;
    } else {
      result.status = ResultStatus::Mismatch;
      files_.back().error = "differs from the existing file, which was kept";
    }
    encode(result, out_);
    state_ = State::AwaitOffer;
    return;
  }
  const Sha256Digest got = hash_.finish();
  Result result;
  result.received_sha256 = got;
  files_.back().sha256 = got;
  if (got != trailer.sha256) {
    sink_.discard();
    result.status = ResultStatus::Mismatch;
    files_.back().error = "sha256 mismatch: the file was discarded";
  } else {
    const auto committed = sink_.commit();
    if (committed) {
      result.status = ResultStatus::Ok;
      files_.back().ok = true;
    } else {
      result.status = ResultStatus::WriteError;
      files_.back().error = committed.error();
    }
  }
  encode(result, out_);
  state_ = State::AwaitOffer;
}

void FileReceiver::reject(RejectReason reason, std::string message) {
  files_.back().error = fmt::format("refused: {}: {}", to_string(reason), message);
  encode(Reject{reason, std::move(message)}, out_);
  state_ = State::AwaitOffer;
}

void FileReceiver::write_error(const std::string& what) {
  // The partial file stays for a later resume; the final name is untouched.
  files_.back().error = fmt::format("write failed: {}", what);
  Result result;
  result.status = ResultStatus::WriteError;
  encode(result, out_);
  error_ = files_.back().error;
  state_ = State::Failed;
}

void FileReceiver::fail(std::string error) {
  SPDLOG_DEBUG("file receiver: {}", error);
  error_ = std::move(error);
  if (!files_.empty() && files_.back().error.empty() && !files_.back().ok) {
    files_.back().error = error_;
  }
  state_ = State::Failed;
}

}  // namespace tinytcp::proto

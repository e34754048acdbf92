#include "proto/file_receiver.hh"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tinytcp::proto {

namespace {

void add_to(FileReceiver::Totals& t, const FileReceiver::FileOutcome& f) {
  ++t.entries;
  if (!f.ok) {
    ++t.failed;
  } else if (f.directory) {
    ++t.directories;
  } else {
    ++t.files;
    t.present += f.already_present ? 1 : 0;
    t.bytes += f.size;
  }
  t.bytes_received += f.bytes_received;
}

}  // namespace

FileReceiver::~FileReceiver() {
  if (waiting_ != Waiting::None && runner_ != nullptr) {
    runner_->abandon();
  }
}

bool FileReceiver::wants_input() const {
  return held_input_.empty() && !output_blocked() && waiting_ == Waiting::None &&
         !(state_ == State::AwaitOffer && out_of_offers());
}

bool FileReceiver::out_of_offers() const {
  return last_poll_.has_value() && offer_nanotokens_ < kNanotokens;
}

void FileReceiver::poll(Instant now) {
  const uint64_t full = uint64_t{policy_.offer_burst} * kNanotokens;
  if (!last_poll_) {
    offer_nanotokens_ = full;
  } else if (now > *last_poll_) {
    const auto elapsed = static_cast<uint64_t>((now - *last_poll_).count());
    const uint64_t rate = std::max<uint64_t>(policy_.offers_per_second, 1);
    // elapsed * rate nanotokens, without overflow: past a full bucket's
    // worth of time the bucket is full anyway.
    const uint64_t refill = elapsed >= full / rate ? full : elapsed * rate;
    offer_nanotokens_ = std::min(full, offer_nanotokens_ + refill);
  }
  if (!last_poll_ || now > *last_poll_) {
    last_poll_ = now;
  }
  if (waiting_ != Waiting::None && runner_ != nullptr) {
    if (auto digest = runner_->result()) {
      const Waiting kind = waiting_;
      waiting_ = Waiting::None;
      on_hashed(kind, *digest);
    }
  }
  parse_held();
}

std::optional<Duration> FileReceiver::time_until_ready() const {
  if (held_input_.empty() || state_ != State::AwaitOffer || !out_of_offers() ||
      waiting_ != Waiting::None) {
    return std::nullopt;
  }
  const uint64_t rate = std::max<uint64_t>(policy_.offers_per_second, 1);
  return Duration((kNanotokens - offer_nanotokens_ + rate - 1) / rate);
}

void FileReceiver::parse_held() {
  // parse() holds the rest again if something blocks it once more.
  while (!held_input_.empty() && wants_input_besides_held()) {
    const std::string held = std::move(held_input_);
    held_input_.clear();
    parse(held);
  }
}

bool FileReceiver::wants_input_besides_held() const {
  return !output_blocked() && waiting_ == Waiting::None &&
         !(state_ == State::AwaitOffer && out_of_offers());
}

void FileReceiver::run_hash(Waiting kind, uint64_t bytes, HashRunner::Job job) {
  if (runner_ == nullptr || bytes < policy_.inline_hash_bytes) {
    on_hashed(kind, job());
    return;
  }
  waiting_ = kind;
  runner_->start(std::move(job));
}

void FileReceiver::on_hashed(Waiting kind, const HashRunner::Digest& digest) {
  switch (kind) {
    case Waiting::ResumePrefix:
      if (!digest) {
        held_ = 0;  // unreadable: start over from 0
        hash_.finish();
      }
      accept_offer(digest ? *digest : Sha256Digest{});
      return;
    case Waiting::StartPrefix:
      if (!digest) {
        write_error(digest.error());
        return;
      }
      begin_data(start_offset_);
      return;
    case Waiting::Confirm:
      confirmed(digest);
      return;
    case Waiting::None:
      return;
  }
}

void FileReceiver::consume_output(size_t n) {
  out_pos_ += std::min(n, out_.size() - out_pos_);
  if (out_pos_ == out_.size()) {
    out_.clear();
    out_pos_ = 0;
  }
  parse_held();  // room again
}

void FileReceiver::on_input(std::string_view data) {
  if (!held_input_.empty() || !wants_input_besides_held()) {
    hold(data);
    return;
  }
  parse(data);
}

void FileReceiver::hold(std::string_view data) {
  if (state_ == State::Failed || state_ == State::Closed || data.empty()) {
    return;
  }
  if (data.size() >
      policy_.max_held_input_bytes - std::min(policy_.max_held_input_bytes, held_input_.size())) {
    held_input_.clear();
    fail(fmt::format(
        "the sender keeps sending while our replies cannot leave (over {} bytes held back)",
        policy_.max_held_input_bytes));
    return;
  }
  held_input_.append(data);
}

void FileReceiver::parse(std::string_view data) {
  while (!data.empty()) {
    if (state_ == State::Failed || state_ == State::Closed) {
      held_input_.clear();
      return;  // nothing more is expected: ignore, never buffer
    }
    if (waiting_ != Waiting::None) {
      hold(data);  // nothing is parsed while a hash job uses the sink
      return;
    }
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
    if (output_blocked() || (state_ == State::AwaitOffer && out_of_offers())) {
      hold(data);  // back-pressure: no more replies until these leave
      return;
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

FileReceiver::Totals FileReceiver::totals() const {
  Totals t = dropped_totals_;
  for (const auto& f : files_) {
    add_to(t, f);
  }
  return t;
}

void FileReceiver::add_record(FileOutcome outcome) {
  if (files_.size() >= std::max<size_t>(policy_.max_records, 1)) {
    // The oldest is finished (only the newest record is ever in progress).
    add_to(dropped_totals_, files_.front());
    files_.erase(files_.begin());
    ++records_dropped_;
  }
  files_.push_back(std::move(outcome));
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
  ++offers_;
  if (last_poll_) {
    offer_nanotokens_ -= std::min(offer_nanotokens_, kNanotokens);
  }
  confirming_ = false;
  const bool safe = is_safe_path(offer.name);
  FileOutcome outcome;
  // Checked before it is kept: a name that is no safe path (up to a whole
  // frame of it) is kept only cut short.
  outcome.name = safe || offer.name.size() <= kMaxRecordedBadName
                     ? offer.name
                     : offer.name.substr(0, kMaxRecordedBadName) + "...";
  outcome.size = offer.size;
  outcome.directory = is_directory_path(offer.name);
  add_record(std::move(outcome));
  offer_.version = offer.version;
  offer_.size = offer.size;
  offer_.file_id = offer.file_id;
  offer_.name = safe ? offer.name : std::string();
  if (offers_ > policy_.max_files) {
    reject(RejectReason::TooLarge,
           fmt::format("session limit: at most {} entries per session", policy_.max_files));
    fail(fmt::format("gave up the session: more than {} entries offered", policy_.max_files));
    return;
  }
  if (offer.version != kVersion) {
    reject(RejectReason::BadVersion,
           fmt::format("version {} (we speak {})", offer.version, kVersion));
    return;
  }
  if (!safe) {
    reject(RejectReason::BadName,
           "paths must be relative, '/'-separated, without empty, '.' or '..' components, "
           "backslashes or control characters, and within the length and depth limits");
    return;
  }
  if (files_.back().directory) {
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
  const uint64_t need = offer.size - held_;
  const uint64_t budget =
      policy_.max_session_bytes - std::min(policy_.max_session_bytes, session_bytes_);
  if (need > budget) {
    if (held_ == 0) {
      sink_.discard();  // the partial file open() just created: nothing to resume from
    }
    reject(RejectReason::TooLarge,
           fmt::format("session limit: {} bytes needed, {} of {} per session left", need, budget,
                       policy_.max_session_bytes));
    return;
  }
  // UINT64_MAX: the file system has no size to check against.
  if (const uint64_t free = sink_.free_space(); free != UINT64_MAX) {
    const uint64_t usable = free - std::min(free, policy_.free_space_reserve);
    if (need > usable) {
      if (held_ == 0) {
        sink_.discard();
      }
      reject(RejectReason::NoSpace, fmt::format("{} bytes needed, {} free ({} kept in reserve)",
                                                need, free, policy_.free_space_reserve));
      return;
    }
  }
  partial_held_ = partial->held;
  hash_.finish();  // start over
  if (held_ == 0) {
    accept_offer(Sha256Digest{});
    return;
  }
  run_hash(Waiting::ResumePrefix, held_, [this, n = held_]() -> HashRunner::Digest {
    if (const auto hashed = sink_.hash_prefix(n, hash_); !hashed) {
      return make_unexpected(hashed.error());
    }
    return hash_.peek();
  });
}

void FileReceiver::accept_offer(const Sha256Digest& prefix_sha256) {
  if (held_ < partial_held_) {
    // Bytes past what we offer to resume from (an unreadable prefix, or a
    // partial file longer than the file now offered) must go: the sink
    // appends, and the hash covers only what arrives from here on.
    const auto truncated = sink_.truncate(held_);
    if (!truncated) {
      reject(RejectReason::IoError, truncated.error());
      return;
    }
  }
  session_bytes_ += offer_.size - held_;
  Accept accept;
  accept.resume_offset = held_;
  accept.prefix_sha256 = held_ > 0 ? prefix_sha256 : Sha256Digest{};
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
  took();
  Result result;
  result.status = ResultStatus::Ok;
  encode(result, out_);
}

void FileReceiver::offer_existing(const Offer& offer) {
  // Never replaced without `force`. If it has the offered size, the sender
  // may confirm it is the same file (a directory sent again after an
  // interruption skips what already arrived); otherwise it is refused. The
  // ACCEPT does not carry the file's SHA-256: any sender could learn it.
  // The sender proves it has the same bytes with its TRAILER instead, and
  // only then is the file read and hashed.
  const auto size = sink_.existing_size(offer.name);
  if (!size || *size != offer.size) {
    reject(RejectReason::Exists, offer.name);
    return;
  }
  confirming_ = true;
  held_ = offer.size;
  Accept accept;
  accept.resume_offset = offer.size;
  accept.existing = true;
  encode(accept, out_);
  state_ = State::AwaitStart;
}

void FileReceiver::on_decline() {
  files_.back().error =
      confirming_ ? fmt::format("refused: {}: {}", to_string(RejectReason::Exists), offer_.name)
                  : std::string("declined by the sender");
  state_ = State::AwaitOffer;
  refused();
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
    // The sender did not recognise our bytes (or chose to restart): they
    // come again, and count against the session's bytes.
    session_bytes_ += held_ - start.offset;
    if (session_bytes_ > policy_.max_session_bytes) {
      fail(fmt::format("gave up the session: more than {} bytes per session",
                       policy_.max_session_bytes));
      return;
    }
    const auto truncated = sink_.truncate(start.offset);
    if (!truncated) {
      write_error(truncated.error());
      return;
    }
    hash_.finish();
    if (start.offset > 0) {
      start_offset_ = start.offset;
      run_hash(Waiting::StartPrefix, start.offset,
               [this, n = start.offset]() -> HashRunner::Digest {
                 if (const auto hashed = sink_.hash_prefix(n, hash_); !hashed) {
                   return make_unexpected(hashed.error());
                 }
                 return Sha256Digest{};
               });
      return;
    }
  }
  begin_data(start.offset);
}

void FileReceiver::begin_data(uint64_t offset) {
  position_ = offset;
  files_.back().resumed_from = offset;
  state_ = position_ == offer_.size ? State::AwaitTrailer : State::Receiving;
}

void FileReceiver::confirmed(const HashRunner::Digest& hashed) {
  // Nothing was written: the file in place stays as it is either way. Its
  // SHA-256 goes back only to a sender that showed it has the same bytes.
  Result result;
  result.status = ResultStatus::Mismatch;
  if (!hashed) {
    files_.back().error =
        fmt::format("cannot check the existing file, which was kept: {}", hashed.error());
  } else if (trailer_sha256_ == *hashed) {
    result.status = ResultStatus::Ok;
    result.received_sha256 = *hashed;
    files_.back().sha256 = *hashed;
    files_.back().ok = true;
    files_.back().already_present = true;
  } else {
    files_.back().error =
        fmt::format("refused: {}: {} (it differs from the file in place, which was kept)",
                    to_string(RejectReason::Exists), offer_.name);
  }
  encode(result, out_);
  state_ = State::AwaitOffer;
  if (result.status == ResultStatus::Ok) {
    took();
  } else {
    refused();
  }
}

void FileReceiver::on_trailer(const Trailer& trailer) {
  if (confirming_) {
    trailer_sha256_ = trailer.sha256;
    run_hash(Waiting::Confirm, offer_.size,
             [this, name = offer_.name] { return sink_.hash_existing(name); });
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
  if (result.status == ResultStatus::Ok) {
    took();
  } else {
    refused();
  }
}

void FileReceiver::took() {
  refusals_in_a_row_ = 0;
}

void FileReceiver::refused() {
  if (++refusals_in_a_row_ >= policy_.max_refusals_in_a_row && state_ != State::Failed) {
    fail(fmt::format("gave up the session: {} offers in a row were not taken (the last: {})",
                     refusals_in_a_row_, files_.back().error));
  }
}

void FileReceiver::reject(RejectReason reason, std::string message) {
  files_.back().error = fmt::format("refused: {}: {}", to_string(reason), message);
  encode(Reject{reason, std::move(message)}, out_);
  state_ = State::AwaitOffer;
  refused();
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
  held_input_.clear();
  if (!files_.empty() && files_.back().error.empty() && !files_.back().ok) {
    files_.back().error = error_;
  }
  state_ = State::Failed;
}

}  // namespace tinytcp::proto

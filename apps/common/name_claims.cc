#include "common/name_claims.hh"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tinytcp::apps {

Expected<bool, std::string> NameClaims::claim(const std::string& name, ClaimingFileSink& sink) {
  const auto it = holders_.find(name);
  if (it == holders_.end()) {
    holders_.emplace(name, &sink);
    return true;
  }
  ClaimingFileSink* holder = it->second;
  if (holder == &sink) {
    return true;
  }
  if (holder->peer_address() != sink.peer_address()) {
    ++refused_;
    return make_unexpected(
        fmt::format("busy: {} is being received from another sender; try again later", name));
  }
  ++taken_over_;
  spdlog::info("{}: a newer session from the same sender takes over", name);
  holder->let_go();  // releases every claim it holds, this one included
  holders_[name] = &sink;
  return true;
}

void NameClaims::release(const std::string& name, const ClaimingFileSink& sink) {
  const auto it = holders_.find(name);
  if (it != holders_.end() && it->second == &sink) {
    holders_.erase(it);
  }
}

ClaimingFileSink::ClaimingFileSink(NameClaims& claims, std::unique_ptr<proto::FileSink> inner,
                                   const stack::IpAddress& peer_address)
    : claims_(claims), inner_(std::move(inner)), peer_address_(peer_address) {}

ClaimingFileSink::~ClaimingFileSink() {
  inner_.reset();  // pending writes finish before the name is free
  release_claim();
}

void ClaimingFileSink::release_claim() {
  if (!claimed_.empty()) {
    claims_.release(claimed_, *this);
    claimed_.clear();
  }
}

void ClaimingFileSink::let_go() {
  taken_over_ = true;
  inner_.reset();
  release_claim();
}

bool ClaimingFileSink::exists(std::string_view path) {
  return inner_ && inner_->exists(path);
}

std::optional<uint64_t> ClaimingFileSink::existing_size(std::string_view path) {
  return inner_ ? inner_->existing_size(path) : std::nullopt;
}

Expected<Sha256Digest, std::string> ClaimingFileSink::hash_existing(std::string_view path) {
  if (!inner_) {
    return make_unexpected(std::string(kTakenOver));
  }
  return inner_->hash_existing(path);
}

Expected<bool, std::string> ClaimingFileSink::make_directory(std::string_view path) {
  if (!inner_) {
    return make_unexpected(std::string(kTakenOver));
  }
  return inner_->make_directory(path);
}

uint64_t ClaimingFileSink::free_space() {
  return inner_ ? inner_->free_space() : 0;
}

Expected<proto::PartialFile, std::string> ClaimingFileSink::open(std::string_view path,
                                                                 const Sha256Digest& file_id) {
  if (!inner_) {
    return make_unexpected(std::string(kTakenOver));
  }
  release_claim();  // the previous file, if its outcome left it claimed
  std::string name(path);
  if (auto claimed = claims_.claim(name, *this); !claimed) {
    return make_unexpected(claimed.error());
  }
  claimed_ = std::move(name);
  return inner_->open(path, file_id);
}

Expected<bool, std::string> ClaimingFileSink::hash_prefix(uint64_t n, proto::ContentHash& hash) {
  if (!inner_) {
    return make_unexpected(std::string(kTakenOver));
  }
  return inner_->hash_prefix(n, hash);
}

Expected<bool, std::string> ClaimingFileSink::truncate(uint64_t n) {
  if (!inner_) {
    return make_unexpected(std::string(kTakenOver));
  }
  return inner_->truncate(n);
}

Expected<bool, std::string> ClaimingFileSink::write(std::string_view data) {
  if (!inner_) {
    return make_unexpected(std::string(kTakenOver));
  }
  return inner_->write(data);
}

Expected<bool, std::string> ClaimingFileSink::commit() {
  if (!inner_) {
    return make_unexpected(std::string(kTakenOver));
  }
  auto committed = inner_->commit();
  release_claim();
  return committed;
}

void ClaimingFileSink::discard() {
  if (inner_) {
    inner_->discard();
  }
  release_claim();
}

}  // namespace tinytcp::apps

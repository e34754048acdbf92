// Any bytes into the file-transfer receiver (and the frame decoder under it):
// it must fail cleanly or make progress, never crash, never buffer unbounded.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "proto/file_receiver.hh"
#include "util/check.hh"

namespace {

class NullSink : public tinytcp::proto::FileSink {
 public:
  bool exists(std::string_view name) override { return name == "exists" || name == "same"; }
  std::optional<uint64_t> existing_size(std::string_view name) override {
    return name == "same" ? std::optional<uint64_t>(3) : std::nullopt;
  }
  tinytcp::Expected<tinytcp::Sha256Digest, std::string> hash_existing(std::string_view) override {
    return tinytcp::sha256("abc");
  }
  tinytcp::Expected<bool, std::string> make_directory(std::string_view path) override {
    if (path.rfind("blocked", 0) == 0) {
      return tinytcp::make_unexpected(std::string("blocked"));
    }
    return true;
  }
  uint64_t free_space() override { return 1 << 20; }
  tinytcp::Expected<tinytcp::proto::PartialFile, std::string> open(
      std::string_view, const tinytcp::Sha256Digest&) override {
    return tinytcp::proto::PartialFile{held_};
  }
  tinytcp::Expected<bool, std::string> hash_prefix(uint64_t n,
                                                   tinytcp::proto::ContentHash& h) override {
    h.update(std::string(static_cast<size_t>(n), 'p'));
    return true;
  }
  tinytcp::Expected<bool, std::string> truncate(uint64_t n) override {
    held_ = n;
    return true;
  }
  tinytcp::Expected<bool, std::string> write(std::string_view data) override {
    written_ += data.size();
    TINYTCP_CHECK(written_ <= (1u << 20) + held_);
    return true;
  }
  tinytcp::Expected<bool, std::string> commit() override { return true; }
  void discard() override {}

 private:
  uint64_t held_ = 100;
  uint64_t written_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  NullSink sink;
  tinytcp::proto::ReceiverPolicy policy;
  policy.max_size = 1 << 20;
  policy.max_records = 64;
  policy.offer_burst = 50;
  policy.offers_per_second = 100;
  tinytcp::proto::FileReceiver receiver(sink, policy);
  if (size == 0) {
    return 0;
  }
  // The first byte picks the piece size and whether the peer reads our
  // replies (a sender whose window stays at zero does not) and whether time
  // passes (the OFFER rate).
  const uint8_t mode = data[0];
  const size_t piece = 1 + static_cast<size_t>(mode & 0x1f) * 37;
  const bool reads_replies = (mode & 0x20) != 0;
  const bool polls = (mode & 0x40) != 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  tinytcp::Instant now{};
  while (!input.empty()) {
    const auto chunk = input.substr(0, piece);
    input.remove_prefix(chunk.size());
    receiver.on_input(chunk);
    // Replies stay bounded whatever the peer does: held input is never
    // parsed into more replies past the bound.
    TINYTCP_CHECK(receiver.output().size() <=
                  policy.max_output_bytes + tinytcp::proto::kMaxFrameBody + 64);
    TINYTCP_CHECK(receiver.files().size() <= policy.max_records);
    if (reads_replies) {
      receiver.consume_output(receiver.output().size());
    }
    if (polls) {
      now += std::chrono::milliseconds(10);
      receiver.poll(now);
    }
  }
  return 0;
}

#pragma once

// FileReceiver: the receiving side of the file-transfer protocol as a sans-I/O
// state machine. It validates each OFFER (safe relative path, no overwrite
// without `force`, size limit, free space), creates directory entries, offers
// to resume from the bytes a partial file already holds (or to confirm an
// identical file already in place), writes file bytes through a FileSink while
// hashing them, and commits the file under its final name only when the
// SHA-256 of the whole file matches.
//
// The sender is untrusted (the protocol has no authentication): everything a
// session keeps is bounded by ReceiverPolicy. The records of the offers are
// capped (the oldest finished ones are dropped and counted in totals());
// replies wait in a bounded output, and while it is over its bound the
// receiver holds input back unparsed and wants_input() is false, so that a
// sender that does not read its replies stops being read (back-pressure)
// instead of growing the receiver; one that keeps sending anyway past a
// second bound fails the session. A session that only produces refusals,
// or goes past its entry or byte limits, is given up with one clear error.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/content_hash.hh"
#include "proto/file_source.hh"
#include "proto/hash_runner.hh"
#include "proto/transfer_messages.hh"
#include "util/time.hh"

namespace tinytcp::proto {

struct ReceiverPolicy {
  bool force = false;  // overwrite an existing file
  uint64_t max_size = UINT64_MAX;
  // Entries (files and directories, refused ones included) one session may
  // offer; the one past it is refused and ends the session.
  uint64_t max_files = 100'000;
  // File bytes one session may bring (sizes offered minus what was held);
  // a file that would go past it is refused (TooLarge).
  uint64_t max_session_bytes = UINT64_MAX;
  // Bytes the file system keeps free: a file is refused (NoSpace) when it
  // would leave less.
  uint64_t free_space_reserve = 64ull << 20;
  // Offers refused one after another (no file or directory taken between
  // them) before the session is given up.
  uint32_t max_refusals_in_a_row = 100;
  // Records of offers kept for files(); older finished ones are dropped.
  size_t max_records = 1024;
  // Replies waiting to be sent before input is held back (wants_input()).
  size_t max_output_bytes = 64 * 1024;
  // Input held back unparsed before the session fails: a sender that keeps
  // sending while its replies cannot leave.
  size_t max_held_input_bytes = 1 << 20;
  // OFFERs per second after a burst (a token bucket); only once poll() has
  // given the receiver the time.
  uint32_t offers_per_second = 1000;
  uint32_t offer_burst = 1000;
  // Whole-file hashes shorter than this run in the caller's thread even
  // with a HashRunner (about 30 ms at 2 GB/s): a job's round trip through
  // the app's loop would cost more than it saves.
  uint64_t inline_hash_bytes = 64ull << 20;
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
    std::string name;  // the offered path (cut short when it was not a safe path)
    bool directory = false;
    bool already_present = false;  // an identical file was in place; left untouched
    uint64_t size = 0;
    uint64_t resumed_from = 0;
    uint64_t bytes_received = 0;  // file bytes received in this session
    bool ok = false;
    std::string error;      // one line when !ok
    Sha256Digest sha256{};  // of the bytes received, once the TRAILER came
  };

  // What the session's records add up to, the dropped ones included.
  struct Totals {
    uint64_t entries = 0;      // offers
    uint64_t files = 0;        // files stored or found already present
    uint64_t present = 0;      // of those, already present
    uint64_t directories = 0;  // directory entries made
    uint64_t failed = 0;       // offers not taken (refused, mismatch, interrupted)
    uint64_t bytes = 0;        // sizes of the files stored or present
    uint64_t bytes_received = 0;
  };

  // A name that cannot be a safe path is kept only this long in its record.
  static constexpr size_t kMaxRecordedBadName = 256;

  // `hash` (not owned, outliving the receiver) computes the files' SHA-256;
  // null: an InlineContentHash of its own. `runner` (not owned, outliving
  // the receiver) runs the hashes that read whole files from the sink; null:
  // they run inside on_input().
  FileReceiver(FileSink& sink, ReceiverPolicy policy, ContentHash* hash = nullptr,
               HashRunner* runner = nullptr)
      : sink_(sink),
        policy_(policy),
        hash_(hash != nullptr ? *hash : inline_hash_),
        runner_(runner) {}
  // Waits for a hash job still running (it uses the sink).
  ~FileReceiver();
  FileReceiver(const FileReceiver&) = delete;
  FileReceiver& operator=(const FileReceiver&) = delete;

  // Takes every byte; what cannot be parsed now (output over its bound) is
  // held and parsed as consume_output() makes room.
  void on_input(std::string_view data);
  // False while replies wait past ReceiverPolicy::max_output_bytes, a hash
  // job runs, the OFFER rate is spent or input is held back: the driver
  // should stop reading the stream until it is true again (after
  // consume_output() or poll()).
  bool wants_input() const;
  // Call on every pass of the driver's loop: takes a finished hash job's
  // result, refills the OFFER rate from `now`, and goes on with held input.
  void poll(Instant now);
  // How long until the OFFER rate lets held input go on (nothing: not
  // waiting for the time).
  std::optional<Duration> time_until_ready() const;
  // A hash job runs in the HashRunner: the session is busy, not idle.
  bool hashing() const { return waiting_ != Waiting::None; }
  std::string_view output() const { return std::string_view(out_).substr(out_pos_); }
  void consume_output(size_t n);

  State state() const { return state_; }
  const std::string& error() const { return error_; }
  // The records of the offers of this session, in order; at most
  // ReceiverPolicy::max_records (the oldest are dropped first).
  const std::vector<FileOutcome>& files() const { return files_; }
  // Records dropped from the front of files().
  uint64_t records_dropped() const { return records_dropped_; }
  Totals totals() const;
  // Bytes of the current file received so far (for progress).
  uint64_t position() const { return position_; }

 private:
  static constexpr uint64_t kNanotokens = 1'000'000'000;  // one OFFER
  enum class Waiting { None, ResumePrefix, StartPrefix, Confirm };

  void parse(std::string_view data);
  void parse_held();
  bool wants_input_besides_held() const;
  bool out_of_offers() const;
  // Runs `job` (reading `bytes` of a file) in runner_ or, for short ones or
  // without a runner, now; on_hashed() goes on with its result.
  void run_hash(Waiting kind, uint64_t bytes, HashRunner::Job job);
  void on_hashed(Waiting kind, const HashRunner::Digest& digest);
  void accept_offer(const Sha256Digest& prefix_sha256);
  void begin_data(uint64_t offset);
  void confirmed(const HashRunner::Digest& hashed);
  bool output_blocked() const { return out_.size() - out_pos_ > policy_.max_output_bytes; }
  void hold(std::string_view data);
  void add_record(FileOutcome outcome);
  void on_message(const Message& m);
  void on_offer(const Offer& offer);
  void on_start(const Start& start);
  void on_trailer(const Trailer& trailer);
  void on_decline();
  void on_directory(const Offer& offer);
  void offer_existing(const Offer& offer);
  void took();  // an offer was taken: the run of refusals ends
  void refused();
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
  std::string held_input_;  // not parsed yet: output was over its bound

  Offer offer_;
  uint64_t held_ = 0;
  bool confirming_ = false;  // the offer is for the existing file below
  uint64_t position_ = 0;
  uint64_t offers_ = 0;
  uint64_t session_bytes_ = 0;  // file bytes this session was allowed to bring
  uint32_t refusals_in_a_row_ = 0;
  Waiting waiting_ = Waiting::None;  // for runner_'s job
  uint64_t partial_held_ = 0;        // what the partial file held when opened
  uint64_t start_offset_ = 0;
  Sha256Digest trailer_sha256_{};
  std::optional<Instant> last_poll_;  // the OFFER rate applies once set
  uint64_t offer_nanotokens_ = 0;     // 1e9 per OFFER
  InlineContentHash inline_hash_;
  ContentHash& hash_;
  HashRunner* runner_;
  std::vector<FileOutcome> files_;
  uint64_t records_dropped_ = 0;
  Totals dropped_totals_;
};

}  // namespace tinytcp::proto

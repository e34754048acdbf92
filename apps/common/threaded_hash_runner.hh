#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

#include "proto/hash_runner.hh"

namespace tinytcp::apps {

// proto::HashRunner on a thread of its own: the receiver's whole-file hashes
// (an existing file to confirm, a partial file's prefix to resume; up to a
// file's size for a hundred-byte OFFER) run there instead of stalling the
// event loop. wakeup_fd() (an eventfd) becomes readable when a job finishes,
// so a loop can wait on it instead of polling; result() clears it.
class ThreadedHashRunner final : public proto::HashRunner {
 public:
  // Throws std::runtime_error when the eventfd cannot be made.
  ThreadedHashRunner();
  ~ThreadedHashRunner() override;
  ThreadedHashRunner(const ThreadedHashRunner&) = delete;
  ThreadedHashRunner& operator=(const ThreadedHashRunner&) = delete;

  void start(Job job) override;
  std::optional<Digest> result() override;
  void abandon() override;
  int wakeup_fd() const { return wakeup_fd_; }
  // Jobs run to completion.
  uint64_t jobs() const;

 private:
  void run();

  int wakeup_fd_ = -1;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  Job job_;  // waiting for the thread
  bool busy_ = false;
  std::optional<Digest> result_;
  uint64_t jobs_ = 0;
  bool stop_ = false;
  std::thread thread_;  // started at the end of the constructor
};

}  // namespace tinytcp::apps

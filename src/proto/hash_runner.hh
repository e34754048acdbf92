#pragma once

// HashRunner: where FileReceiver runs the hashing that reads a whole file
// from disk (an existing file the sender confirms, the prefix of a partial
// file it resumes). That is up to the size of a file for an OFFER of a
// hundred bytes, so an app runs it beside its event loop instead of in it
// (apps/common/threaded_hash_runner.hh); proto/ itself never starts a thread. The
// receiver starts at most one job at a time, holds the sender's input back
// until poll() finds the job done, and never touches the sink or its
// ContentHash while a job runs: the job may use both from another thread.

#include <functional>
#include <optional>
#include <string>

#include "util/expected.hh"
#include "util/hash.hh"

namespace tinytcp::proto {

class HashRunner {
 public:
  using Digest = Expected<Sha256Digest, std::string>;
  using Job = std::function<Digest()>;
  virtual ~HashRunner() = default;
  // Starts `job`; the runner is idle (no job, or its result taken).
  virtual void start(Job job) = 0;
  // The job's result once it has finished (the runner is then idle again);
  // nothing while it runs or when no job was started.
  virtual std::optional<Digest> result() = 0;
  // Waits for a running job and forgets its result (the receiver is going
  // away and the job uses its sink).
  virtual void abandon() = 0;
};

}  // namespace tinytcp::proto

#pragma once

// The impairment model: what a bad network does to one direction of a link.
// This kernel has no `tc netem`, so this is ours. Each packet pushed in goes
// through, in order:
//
//   loss       Bernoulli (independent, probability `loss`) or Gilbert-Elliott
//              (a two-state Markov chain, so losses come in bursts)
//   duplicate  with probability `duplicate`, a second copy follows the first
//   corrupt    with probability `corrupt` per copy, one random bit is flipped
//   rate       a link of `rate_bits_per_second`: each packet waits for the ones
//              before it to be serialized; past `rate_queue_limit_bytes` of
//              backlog it is tail-dropped, as a router queue would
//   delay      `delay` plus jitter uniform in [-jitter, +jitter] (never below
//              zero); packets keep their order (a later packet never leaves
//              before an earlier one), unless...
//   reorder    with probability `reorder`, a packet is held back
//              `reorder_delay` longer and later packets overtake it
//
// The model is time-driven and does no I/O: it takes `Instant now`, reports
// next_deadline(), and release(now) hands out what is due. Randomness comes
// from one seeded Rng, so the same seed and the same pushes at the same
// instants replay exactly. Buffers are reused: after warm-up nothing is
// allocated per packet. ImpairedAdapter runs one model per direction.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/adapter.hh"
#include "util/counters.hh"
#include "util/random.hh"
#include "util/time.hh"

namespace tinytcp::io {

// Gilbert-Elliott burst loss. In the good state a packet is lost with
// probability `loss_in_good`, in the bad state with `loss_in_bad`; after each
// packet the chain moves good->bad with `good_to_bad` and bad->good with
// `bad_to_good`. Long-run loss = (r*k + p*h) / (p + r) with p = good_to_bad,
// r = bad_to_good, k = loss_in_good, h = loss_in_bad; a bad spell lasts 1/r
// packets on average.
struct GilbertElliott {
  double good_to_bad = 0.0;
  double bad_to_good = 1.0;
  double loss_in_good = 0.0;
  double loss_in_bad = 1.0;

  double mean_loss() const;
};

struct ImpairmentConfig {
  double loss = 0.0;                        // Bernoulli loss probability
  std::optional<GilbertElliott> burst;      // when set, replaces `loss`
  double duplicate = 0.0;                   // probability of a second copy
  double corrupt = 0.0;                     // probability of one flipped bit (per copy)
  uint64_t rate_bits_per_second = 0;        // 0: no rate limit
  size_t rate_queue_limit_bytes = 1 << 20;  // backlog of the rate-limited link
  Duration delay{0};
  Duration jitter{0};
  double reorder = 0.0;  // probability a packet is held back
  Duration reorder_delay{std::chrono::milliseconds(10)};
  size_t hold_limit_packets = 1 << 16;  // packets held at once, over all stages

  // True when the model changes nothing (ImpairedAdapter may then pass through).
  bool is_identity() const;
};

enum class ImpairmentDrop {
  kLoss,           // the loss model said so
  kRateQueueFull,  // the rate-limited link's backlog was full
  kHoldLimit,      // hold_limit_packets reached (bounded memory)
  kCount,
};
const char* to_string(ImpairmentDrop drop);

struct ImpairmentStats {
  uint64_t packets_in = 0;
  uint64_t packets_out = 0;
  uint64_t bytes_out = 0;
  uint64_t duplicated = 0;
  uint64_t corrupted = 0;
  uint64_t reordered = 0;
  EnumCounters<ImpairmentDrop> drops;
};

class ImpairmentModel {
 public:
  ImpairmentModel(const ImpairmentConfig& config, uint64_t seed);

  // A packet enters the impaired direction at `now` (copied; the caller's
  // buffer may be reused at once).
  void push(std::string_view packet, Instant now);
  // Hands every packet due at `now` to `out`, earliest first (ties in push
  // order). Returns how many. `out` may push into this model again.
  size_t release(Instant now, const PacketHandler& out);
  // Appends a view of every packet due at `now` to `out`, earliest first, for
  // a batched send. The views stay valid until the next push(). Returns how many.
  size_t release_into(Instant now, std::vector<std::string_view>& out);
  // When the earliest held packet is due; std::nullopt when none is held.
  std::optional<Instant> next_deadline() const;

  size_t held_packets() const { return queue_.size(); }
  const ImpairmentStats& stats() const { return stats_; }
  const ImpairmentConfig& config() const { return config_; }
  uint64_t seed() const { return rng_.seed(); }

 private:
  struct Held {
    Instant due;
    uint64_t order;  // push order, breaks ties so equal deadlines stay FIFO
    size_t slot;
  };
  struct Later {
    bool operator()(const Held& a, const Held& b) const {
      return a.due != b.due ? a.due > b.due : a.order > b.order;
    }
  };

  bool lose();
  void hold(std::string_view packet, Instant due);
  Duration sample_delay();

  ImpairmentConfig config_;
  Rng rng_;
  bool bad_state_ = false;       // Gilbert-Elliott state
  Instant link_free_at_{};       // when the rate-limited link finishes its backlog
  Instant last_in_order_due_{};  // FIFO floor for packets that are not reordered
  uint64_t next_order_ = 0;
  std::vector<Held> queue_;        // a min-heap on (due, order)
  std::deque<std::string> slots_;  // packet buffers, stable addresses, reused
  std::vector<size_t> free_slots_;
  ImpairmentStats stats_;
};

}  // namespace tinytcp::io

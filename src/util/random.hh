#pragma once

// Seeded randomness. Everything random in tinytcp (simulated links, the
// impairment stage, property tests) draws from an Rng whose seed is printed and
// can be replayed, so a failing run can be reproduced exactly.

#include <cstdint>
#include <random>
#include <string>

namespace tinytcp {

class Rng {
 public:
  explicit Rng(uint64_t seed) : seed_(seed), engine_(seed) {}

  uint64_t seed() const { return seed_; }
  uint64_t next() { return engine_(); }
  // Uniform in [lo, hi], inclusive.
  uint64_t uniform(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(engine_);
  }
  // Uniform in [0, 1).
  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(engine_); }
  bool chance(double p) { return unit() < p; }
  std::string bytes(size_t n);
  std::mt19937_64& engine() { return engine_; }

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
};

// The seed named by environment variable `name` (decimal or 0x-hex), or
// `fallback` when it is unset or unparsable.
uint64_t seed_from_env(const char* name, uint64_t fallback);

}  // namespace tinytcp

#pragma once

// One counter per enumerator of an error or event enum: "drop and count"
// (ARCHITECTURE.md principle 5). `E` must end with an enumerator `kCount`.
//
//   enum class Ipv4Error { Truncated, BadVersion, ..., kCount };
//   EnumCounters<Ipv4Error> drops;
//   drops.count(Ipv4Error::Truncated);
//   drops[Ipv4Error::Truncated] == 1

#include <array>
#include <cstddef>
#include <cstdint>

namespace tinytcp {

template <typename E>
class EnumCounters {
 public:
  static constexpr size_t kSize = static_cast<size_t>(E::kCount);

  void count(E e, uint64_t n = 1) { counts_[static_cast<size_t>(e)] += n; }
  uint64_t operator[](E e) const { return counts_[static_cast<size_t>(e)]; }
  uint64_t total() const {
    uint64_t t = 0;
    for (const auto c : counts_) {
      t += c;
    }
    return t;
  }
  // Calls f(E, count) for every enumerator, for reports.
  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < kSize; ++i) {
      f(static_cast<E>(i), counts_[i]);
    }
  }

 private:
  std::array<uint64_t, kSize> counts_{};
};

}  // namespace tinytcp

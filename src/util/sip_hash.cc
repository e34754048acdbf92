#include "util/sip_hash.hh"

namespace tinytcp {

namespace {

constexpr uint64_t rotl(uint64_t x, int b) {
  return (x << b) | (x >> (64 - b));
}

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | p[i];
  }
  return v;
}

struct State {
  uint64_t v0, v1, v2, v3;

  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  void absorb(uint64_t m) {
    v3 ^= m;
    round();  // c = 2 compression rounds
    round();
    v0 ^= m;
  }
};

}  // namespace

SipHash::SipHash(const Key& key) : k0_(load_le64(key.data())), k1_(load_le64(key.data() + 8)) {}

uint64_t SipHash::operator()(std::string_view data) const {
  // The constants are "somepseudorandomlygeneratedbytes" (SipHash paper §2).
  State s{k0_ ^ 0x736f6d6570736575ULL, k1_ ^ 0x646f72616e646f6dULL, k0_ ^ 0x6c7967656e657261ULL,
          k1_ ^ 0x7465646279746573ULL};
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t n = data.size();
  const size_t whole = n - n % 8;
  for (size_t i = 0; i < whole; i += 8) {
    s.absorb(load_le64(p + i));
  }
  // The last block: the remaining bytes, little-endian, and the length mod 256
  // in the top byte.
  uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
  for (size_t i = 0; i < n % 8; ++i) {
    last |= static_cast<uint64_t>(p[whole + i]) << (8 * i);
  }
  s.absorb(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) {  // d = 4 finalization rounds
    s.round();
  }
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace tinytcp

#include "util/random.hh"

#include <cstdlib>

namespace tinytcp {

std::string Rng::bytes(size_t n) {
  std::string out(n, '\0');
  size_t i = 0;
  while (i < n) {
    uint64_t v = engine_();
    for (int k = 0; k < 8 && i < n; ++k, ++i) {
      out[i] = static_cast<char>(v & 0xff);
      v >>= 8;
    }
  }
  return out;
}

uint64_t seed_from_env(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);  // configuration edge: read once by tests and apps
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (end == nullptr || *end != '\0') {
    return fallback;
  }
  return v;
}

}  // namespace tinytcp

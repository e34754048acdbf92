#include "util/sip_hash.hh"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <gtest/gtest.h>

#include <string>

#include "util/random.hh"

namespace tinytcp {
namespace {

SipHash::Key sequential_key() {
  SipHash::Key key{};
  for (size_t i = 0; i < key.size(); ++i) {
    key[i] = static_cast<uint8_t>(i);
  }
  return key;
}

std::string sequential_bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>(i);
  }
  return s;
}

// The reference implementation's vectors (key 00..0f, message 00..n-1), as
// little-endian integers; 0 and 15 bytes are printed in the SipHash paper's
// appendix A.
TEST(SipHashTest, ReferenceVectors) {
  const SipHash h(sequential_key());
  EXPECT_EQ(h(sequential_bytes(0)), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(h(sequential_bytes(1)), 0x74f839c593dc67fdULL);
  EXPECT_EQ(h(sequential_bytes(7)), 0xab0200f58b01d137ULL);
  EXPECT_EQ(h(sequential_bytes(8)), 0x93f5f5799a932462ULL);
  EXPECT_EQ(h(sequential_bytes(9)), 0x9e0082df0ba9e4b0ULL);
  EXPECT_EQ(h(sequential_bytes(15)), 0xa129ca6149be45e5ULL);
  EXPECT_EQ(h(sequential_bytes(16)), 0x3f2acc7f57c29bdbULL);
  EXPECT_EQ(h(sequential_bytes(63)), 0x958a324ceb064572ULL);
}

// OpenSSL's SipHash (EVP_MAC "SIPHASH", 8-byte output) as the reference.
uint64_t openssl_siphash(const SipHash::Key& key, const std::string& data) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "SIPHASH", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  size_t size = 8;
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
                               OSSL_PARAM_END};
  uint8_t out[8] = {};
  size_t len = 0;
  const bool ok =
      EVP_MAC_init(ctx, key.data(), key.size(), params) == 1 &&
      EVP_MAC_update(ctx, reinterpret_cast<const uint8_t*>(data.data()), data.size()) == 1 &&
      EVP_MAC_final(ctx, out, &len, sizeof(out)) == 1 && len == 8;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  EXPECT_TRUE(ok);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | out[i];
  }
  return v;
}

TEST(SipHashTest, AgreesWithOpenSslForRandomKeysAndLengths) {
  Rng rng(seed_from_env("TINYTCP_SEED", 15));
  SCOPED_TRACE(testing::Message() << "TINYTCP_SEED=" << rng.seed());
  for (size_t n = 0; n <= 80; ++n) {
    SipHash::Key key{};
    const std::string key_bytes = rng.bytes(key.size());
    std::copy(key_bytes.begin(), key_bytes.end(), key.begin());
    const std::string data = rng.bytes(n);
    EXPECT_EQ(SipHash(key)(data), openssl_siphash(key, data)) << "length " << n;
  }
}

TEST(SipHashTest, KeyChangesEveryOutput) {
  SipHash::Key other = sequential_key();
  other[15] ^= 1;
  const SipHash a(sequential_key());
  const SipHash b(other);
  for (size_t n = 0; n < 24; ++n) {
    EXPECT_NE(a(sequential_bytes(n)), b(sequential_bytes(n))) << "length " << n;
  }
}

}  // namespace
}  // namespace tinytcp

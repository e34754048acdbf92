#include "util/hash.hh"

#include <gtest/gtest.h>

#include <string>

namespace tinytcp {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  Sha256 h;
  h.update(text.substr(0, 10));
  h.update(text.substr(10));
  EXPECT_EQ(h.finish(), sha256(text));
  // finish() starts over.
  h.update("abc");
  EXPECT_EQ(h.finish(), sha256("abc"));
}

TEST(HmacSha256Test, Rfc4231TestCase2) {
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

// RFC 4231 §4.2 and §4.7 (a key longer than the block is hashed first), a
// key of exactly one block, an empty key and message (Python's hmac), asked
// in turns so that every call changes the key the thread's states hold.
TEST(HmacSha256Test, KeysOfEveryLengthInTurns) {
  const std::string key1(20, '\x0b');
  const std::string key6(131, '\xaa');
  const std::string block_key(64, 'k');
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(to_hex(hmac_sha256(key1, "Hi There")),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    EXPECT_EQ(to_hex(hmac_sha256(key6, "Test Using Larger Than Block-Size Key - Hash Key First")),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    EXPECT_EQ(to_hex(hmac_sha256(block_key, "exactly one block of key")),
              "baa93ea4ccc7062ed6870c5e7937dbd35ad7791df4e29df9addeb429ff491acf");
    EXPECT_EQ(to_hex(hmac_sha256("", "")),
              "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  }
  // The same key twice in a row (the states are reused, not rebuilt).
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(SecureRandomTest, GivesRequestedLength) {
  EXPECT_EQ(secure_random_bytes(0).size(), 0u);
  const auto a = secure_random_bytes(32);
  const auto b = secure_random_bytes(32);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
}

TEST(SecureRandomTest, LongRequestsAreFilledWhole) {
  // Past 256 bytes getrandom(2) may return fewer bytes than asked for; the
  // tail of a 1 MiB request must still be random, not the zeros it starts as.
  const auto big = secure_random_bytes(1 << 20);
  ASSERT_EQ(big.size(), 1u << 20);
  EXPECT_NE(big.substr(big.size() - 65536), std::string(65536, '\0'));
}

}  // namespace
}  // namespace tinytcp

namespace tinytcp {
namespace {

TEST(Sha256Test, PeekGivesPrefixDigestAndKeepsGoing) {
  Sha256 h;
  h.update("ab");
  EXPECT_EQ(h.peek(), sha256("ab"));
  EXPECT_EQ(h.bytes_hashed(), 2u);
  h.update("c");
  EXPECT_EQ(h.finish(), sha256("abc"));
  EXPECT_EQ(h.bytes_hashed(), 0u);
}

}  // namespace
}  // namespace tinytcp

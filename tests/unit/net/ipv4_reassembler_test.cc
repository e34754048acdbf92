#include "net/ipv4_reassembler.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "unit/net/net_test_util.hh"
#include "util/random.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using test::ip;

class Ipv4ReassemblerTest : public ::testing::Test {
 protected:
  void make(Ipv4Reassembler::Config config) { r_ = std::make_unique<Ipv4Reassembler>(config); }

  // A fragment of datagram `id` carrying payload_[offset, offset + n).
  std::string fragment(size_t offset, size_t n, bool more, uint16_t id = 7) {
    std::string f(20 + n, '\0');
    wire::Ipv4Header h;
    h.total_length = static_cast<uint16_t>(f.size());
    h.id = id;
    h.more_fragments = more;
    h.fragment_offset = static_cast<uint16_t>(offset);
    h.protocol = 17;
    h.src = ip("10.0.0.1");
    h.dst = ip("10.0.0.2");
    BufferWriter w(f.data(), f.size());
    serialize(h, w);
    w.bytes(std::string_view(payload_).substr(offset, n));
    return f;
  }
  // Feeds a fragment; returns the reassembled datagram if this completed one.
  std::optional<std::string> add(const std::string& f) {
    const auto v = wire::parse_ipv4(f);
    EXPECT_TRUE(v);
    const auto out = r_->add(*v, f, now_);
    return out ? std::optional<std::string>(std::string(*out)) : std::nullopt;
  }
  void expect_whole(const std::optional<std::string>& got, size_t length) {
    ASSERT_TRUE(got);
    const auto v = wire::parse_ipv4(*got);
    ASSERT_TRUE(v);
    EXPECT_FALSE(v->header.is_fragment());
    EXPECT_EQ(v->header.total_length, 20 + length);
    EXPECT_EQ(v->payload, payload_.substr(0, length));
  }
  uint64_t drops(ReassemblyDrop d) const { return r_->drops()[d]; }

  std::string payload_ = Rng(3).bytes(4000);
  Instant now_;
  std::unique_ptr<Ipv4Reassembler> r_ =
      std::make_unique<Ipv4Reassembler>(Ipv4Reassembler::Config{});
};

TEST_F(Ipv4ReassemblerTest, InOrderFragments) {
  EXPECT_FALSE(add(fragment(0, 800, true)));
  EXPECT_FALSE(add(fragment(800, 800, true)));
  expect_whole(add(fragment(1600, 100, false)), 1700);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
  EXPECT_EQ(r_->bytes_buffered(), 0u);
}

TEST_F(Ipv4ReassemblerTest, AnyOrder) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 11);
  Rng rng(seed);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> frags;
    for (size_t off = 0; off < 3000; off += 400) {
      frags.push_back(fragment(off, std::min<size_t>(400, 3000 - off), off + 400 < 3000,
                               static_cast<uint16_t>(round)));
    }
    std::shuffle(frags.begin(), frags.end(), rng.engine());
    std::optional<std::string> out;
    for (size_t i = 0; i < frags.size(); ++i) {
      out = add(frags[i]);
      EXPECT_EQ(out.has_value(), i + 1 == frags.size()) << "seed " << seed;
    }
    expect_whole(out, 3000);
  }
}

TEST_F(Ipv4ReassemblerTest, SeparatesDatagramsById) {
  EXPECT_FALSE(add(fragment(0, 8, true, 1)));
  EXPECT_FALSE(add(fragment(0, 8, true, 2)));
  expect_whole(add(fragment(8, 8, false, 2)), 16);
  expect_whole(add(fragment(8, 4, false, 1)), 12);
}

TEST_F(Ipv4ReassemblerTest, OverlapDropsTheWholeDatagram) {
  EXPECT_FALSE(add(fragment(0, 800, true)));
  EXPECT_FALSE(add(fragment(400, 800, true)));
  EXPECT_EQ(drops(ReassemblyDrop::Overlap), 1u);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
  // What follows starts a new datagram that can never complete.
  EXPECT_FALSE(add(fragment(800, 100, false)));
}

TEST_F(Ipv4ReassemblerTest, ExactDuplicateIsIgnored) {
  EXPECT_FALSE(add(fragment(0, 800, true)));
  EXPECT_FALSE(add(fragment(0, 800, true)));
  EXPECT_EQ(drops(ReassemblyDrop::Duplicate), 1u);
  expect_whole(add(fragment(800, 10, false)), 810);
}

TEST_F(Ipv4ReassemblerTest, NonLastFragmentMustBeMultipleOfEight) {
  EXPECT_FALSE(add(fragment(0, 801, true)));
  EXPECT_EQ(drops(ReassemblyDrop::BadLength), 1u);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
}

TEST_F(Ipv4ReassemblerTest, DataPastTheEndIsInconsistent) {
  EXPECT_FALSE(add(fragment(800, 100, false)));
  EXPECT_FALSE(add(fragment(1600, 8, true)));
  EXPECT_EQ(drops(ReassemblyDrop::Inconsistent), 1u);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
}

TEST_F(Ipv4ReassemblerTest, TwoDifferentEndsAreInconsistent) {
  EXPECT_FALSE(add(fragment(800, 100, false)));
  EXPECT_FALSE(add(fragment(800, 200, false)));
  EXPECT_EQ(drops(ReassemblyDrop::Inconsistent), 1u);
}

TEST_F(Ipv4ReassemblerTest, TooBigIsDropped) {
  payload_.resize(70000, 'z');
  EXPECT_FALSE(add(fragment(65000, 600, false)));
  EXPECT_EQ(drops(ReassemblyDrop::TooBig), 1u);
}

TEST_F(Ipv4ReassemblerTest, TimesOutAfterThirtySeconds) {
  EXPECT_FALSE(add(fragment(0, 8, true)));
  EXPECT_EQ(r_->next_deadline(), now_ + 30s);
  now_ += 30s - 1ns;
  r_->tick(now_);
  EXPECT_EQ(r_->datagrams_in_progress(), 1u);
  now_ += 1ns;
  r_->tick(now_);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
  EXPECT_EQ(drops(ReassemblyDrop::Timeout), 1u);
  EXPECT_EQ(r_->next_deadline(), std::nullopt);
  EXPECT_FALSE(add(fragment(8, 8, false)));
}

TEST_F(Ipv4ReassemblerTest, BoundsDatagramsInProgress) {
  make({2, 64, 1 << 20, 30s});
  EXPECT_FALSE(add(fragment(0, 8, true, 1)));
  EXPECT_FALSE(add(fragment(0, 8, true, 2)));
  EXPECT_FALSE(add(fragment(0, 8, true, 3)));
  EXPECT_EQ(drops(ReassemblyDrop::TooManyDatagrams), 1u);
  EXPECT_EQ(r_->datagrams_in_progress(), 2u);
}

TEST_F(Ipv4ReassemblerTest, BoundsFragmentsPerDatagram) {
  make({64, 3, 1 << 20, 30s});
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(add(fragment(i * 16, 8, true)));
  }
  EXPECT_FALSE(add(fragment(48 + 16, 8, true)));
  EXPECT_EQ(drops(ReassemblyDrop::TooManyFragments), 1u);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
}

TEST_F(Ipv4ReassemblerTest, BoundsMemory) {
  make({64, 64, 1000, 30s});
  EXPECT_FALSE(add(fragment(0, 800, true, 1)));
  EXPECT_FALSE(add(fragment(0, 400, true, 2)));
  EXPECT_EQ(drops(ReassemblyDrop::OutOfMemory), 1u);
  EXPECT_LE(r_->bytes_buffered(), 1000u);
  EXPECT_EQ(r_->datagrams_in_progress(), 1u);
}

}  // namespace
}  // namespace tinytcp::net

#include "net/ipv6_reassembler.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "util/buffer.hh"
#include "util/random.hh"
#include "wire/icmpv6.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;

wire::Ipv6Address addr(const char* text) {
  return wire::Ipv6Address::parse(text).value();
}

class Ipv6ReassemblerTest : public ::testing::Test {
 protected:
  void make(Ipv6Reassembler::Config config) { r_ = std::make_unique<Ipv6Reassembler>(config); }

  // A fragment of datagram `id` carrying payload_[offset, offset + n), with a
  // hop-by-hop options header before the Fragment header when `hop_by_hop`.
  std::string fragment(size_t offset, size_t n, bool more, uint32_t id = 7, bool hop_by_hop = false,
                       const char* src = "fd00::1") {
    std::string ext;
    if (hop_by_hop) {
      ext += std::string{static_cast<char>(wire::ipv6::kFragment), 0, 1, 4, 0, 0, 0, 0};
    }
    std::string frag(8, '\0');
    BufferWriter fw(frag.data(), frag.size());
    serialize(wire::Ipv6FragmentHeader{protocol_, static_cast<uint16_t>(offset), more, id}, fw);
    ext += frag;
    wire::Ipv6Header h;
    h.payload_length = static_cast<uint16_t>(ext.size() + n);
    h.next_header = hop_by_hop ? wire::ipv6::kHopByHop : wire::ipv6::kFragment;
    h.src = addr(src);
    h.dst = addr("fd00::2");
    std::string out(wire::Ipv6Header::kSize, '\0');
    BufferWriter w(out.data(), out.size());
    serialize(h, w);
    return out + ext + payload_.substr(offset, n);
  }
  // Feeds a fragment; returns the reassembled datagram if this completed one.
  std::optional<std::string> add(const std::string& f) {
    const auto v = wire::parse_ipv6(f);
    EXPECT_TRUE(v);
    const auto chain = wire::parse_ipv6_chain(*v);
    EXPECT_TRUE(chain && chain->fragment);
    last_ = r_->add(*v, *chain, now_);
    EXPECT_FALSE(last_.datagram && last_.drop);
    return last_.datagram ? std::optional<std::string>(std::string(*last_.datagram)) : std::nullopt;
  }
  void expect_dropped(const std::string& f, Ipv6ReassemblyDrop why) {
    EXPECT_FALSE(add(f));
    EXPECT_EQ(last_.drop, why) << (last_.drop ? to_string(*last_.drop) : "not dropped");
  }
  // The reassembled datagram parses, has no Fragment header, and carries the
  // first `length` bytes of payload_ after `ext_size` bytes of extension headers.
  void expect_whole(const std::optional<std::string>& got, size_t length, size_t ext_size = 0) {
    ASSERT_TRUE(got);
    const auto v = wire::parse_ipv6(*got);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->header.payload_length, ext_size + length);
    const auto chain = wire::parse_ipv6_chain(*v);
    ASSERT_TRUE(chain);
    EXPECT_FALSE(chain->fragment);
    EXPECT_EQ(chain->protocol, protocol_);
    EXPECT_EQ(chain->offset, ext_size);
    EXPECT_EQ(v->payload.substr(ext_size), payload_.substr(0, length));
  }
  uint64_t drops(Ipv6ReassemblyDrop d) const { return r_->drops()[d]; }

  uint8_t protocol_ = wire::ipv6::kUdp;
  std::string payload_ = Rng(5).bytes(70000);
  Instant now_;
  Ipv6Reassembler::Outcome last_;
  std::unique_ptr<Ipv6Reassembler> r_ =
      std::make_unique<Ipv6Reassembler>(Ipv6Reassembler::Config{});
};

TEST_F(Ipv6ReassemblerTest, InOrderFragments) {
  EXPECT_FALSE(add(fragment(0, 1232, true)));
  EXPECT_FALSE(add(fragment(1232, 1232, true)));
  expect_whole(add(fragment(2464, 100, false)), 2564);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
  EXPECT_EQ(r_->bytes_buffered(), 0u);
  EXPECT_EQ(r_->reassembled(), 1u);
  EXPECT_EQ(r_->drops().total(), 0u);
}

TEST_F(Ipv6ReassemblerTest, AnyOrder) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 12);
  Rng rng(seed);
  for (uint32_t round = 0; round < 50; ++round) {
    std::vector<std::string> frags;
    for (size_t off = 0; off < 3000; off += 400) {
      frags.push_back(fragment(off, std::min<size_t>(400, 3000 - off), off + 400 < 3000, round));
    }
    std::shuffle(frags.begin(), frags.end(), rng.engine());
    std::optional<std::string> out;
    for (size_t i = 0; i < frags.size(); ++i) {
      out = add(frags[i]);
      EXPECT_EQ(out.has_value(), i + 1 == frags.size()) << "seed " << seed;
    }
    expect_whole(out, 3000);
  }
  EXPECT_EQ(r_->bytes_buffered(), 0u);
}

TEST_F(Ipv6ReassemblerTest, PerFragmentHeadersComeFromTheFirstFragment) {
  EXPECT_FALSE(add(fragment(800, 200, false, 7, false)));
  const auto out = add(fragment(0, 800, true, 7, true));
  expect_whole(out, 1000, 8);
  EXPECT_EQ((*out)[6], static_cast<char>(wire::ipv6::kHopByHop));
  EXPECT_EQ((*out)[40], static_cast<char>(protocol_));  // was the Fragment header's 44
}

TEST_F(Ipv6ReassemblerTest, AtomicFragmentIsWholeAndKeptApart) {
  EXPECT_FALSE(add(fragment(0, 800, true)));
  // RFC 6946: same id, offset 0 and M clear: a datagram of its own.
  expect_whole(add(fragment(0, 300, false)), 300);
  EXPECT_EQ(r_->atomic_fragments(), 1u);
  EXPECT_EQ(r_->datagrams_in_progress(), 1u);
  expect_whole(add(fragment(800, 100, false)), 900);
}

TEST_F(Ipv6ReassemblerTest, OverlapDropsTheWholeDatagramAndItsLaterFragments) {
  EXPECT_FALSE(add(fragment(0, 800, true)));
  expect_dropped(fragment(400, 800, true), Ipv6ReassemblyDrop::Overlap);
  EXPECT_EQ(r_->bytes_buffered(), 0u);
  // RFC 5722: fragments not yet received are discarded too.
  expect_dropped(fragment(800, 800, true), Ipv6ReassemblyDrop::Abandoned);
  expect_dropped(fragment(1600, 100, false), Ipv6ReassemblyDrop::Abandoned);
  EXPECT_EQ(r_->datagrams_in_progress(), 1u);  // the tombstone, until the timeout
  now_ += 60s;
  r_->tick(now_);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
  EXPECT_EQ(drops(Ipv6ReassemblyDrop::Timeout), 0u);
  // After it, the id may be used again.
  EXPECT_FALSE(add(fragment(0, 800, true)));
  expect_whole(add(fragment(800, 8, false)), 808);
}

TEST_F(Ipv6ReassemblerTest, OverlapFromBelowAndInside) {
  EXPECT_FALSE(add(fragment(800, 800, true)));
  expect_dropped(fragment(0, 808, true), Ipv6ReassemblyDrop::Overlap);
  EXPECT_FALSE(add(fragment(800, 800, true, 8)));
  expect_dropped(fragment(1000, 8, true, 8), Ipv6ReassemblyDrop::Overlap);
  EXPECT_EQ(drops(Ipv6ReassemblyDrop::Overlap), 2u);
}

TEST_F(Ipv6ReassemblerTest, ExactDuplicateIsIgnored) {
  EXPECT_FALSE(add(fragment(0, 800, true)));
  expect_dropped(fragment(0, 800, true), Ipv6ReassemblyDrop::Duplicate);
  expect_whole(add(fragment(800, 10, false)), 810);
}

TEST_F(Ipv6ReassemblerTest, NonLastFragmentLengthMustBeAMultipleOfEight) {
  expect_dropped(fragment(0, 801, true), Ipv6ReassemblyDrop::BadLength);
  expect_dropped(fragment(800, 0, true), Ipv6ReassemblyDrop::BadLength);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
  EXPECT_FALSE(add(fragment(0, 800, true)));
  expect_whole(add(fragment(800, 801, false)), 1601);  // the last one may be any length
}

TEST_F(Ipv6ReassemblerTest, DropsFragmentsPast65535) {
  // The Fragment header sits at payload offset 0: offset + length <= 65535.
  expect_dropped(fragment(65528, 8, false), Ipv6ReassemblyDrop::TooBig);
  EXPECT_FALSE(add(fragment(65520, 8, true)));
  EXPECT_FALSE(add(fragment(65528, 7, false)));
  expect_dropped(fragment(65528, 8, false, 9, true), Ipv6ReassemblyDrop::TooBig);
}

TEST_F(Ipv6ReassemblerTest, TinyFirstFragmentWithoutTheUpperLayerHeader) {
  // RFC 7112: a TCP first fragment of 16 bytes lacks the 20-byte header.
  protocol_ = wire::ipv6::kTcp;
  EXPECT_FALSE(add(fragment(16, 800, true)));
  expect_dropped(fragment(0, 16, true), Ipv6ReassemblyDrop::IncompleteChain);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);  // the datagram goes with it
  EXPECT_EQ(r_->bytes_buffered(), 0u);
  EXPECT_FALSE(add(fragment(0, 24, true, 8)));
  expect_whole(add(fragment(24, 10, false, 8)), 34);
}

TEST_F(Ipv6ReassemblerTest, FirstFragmentWithTheChainCutShort) {
  // The fragmentable part starts with a destination options header of 16
  // bytes (Hdr Ext Len 1) of which the first fragment carries only 8.
  protocol_ = wire::ipv6::kDestinationOptions;
  payload_[0] = static_cast<char>(wire::ipv6::kUdp);
  payload_[1] = 1;
  payload_.replace(2, 14, std::string{1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  expect_dropped(fragment(0, 8, true), Ipv6ReassemblyDrop::IncompleteChain);
  // With the whole options header and the UDP header, it is fine.
  EXPECT_FALSE(add(fragment(0, 24, true)));
  const auto out = add(fragment(24, 8, false));
  ASSERT_TRUE(out);
  const auto v = wire::parse_ipv6(*out);
  ASSERT_TRUE(v);
  const auto chain = wire::parse_ipv6_chain(*v);
  ASSERT_TRUE(chain);
  EXPECT_EQ(chain->protocol, wire::ipv6::kUdp);
  EXPECT_EQ(chain->offset, 16u);
}

TEST_F(Ipv6ReassemblerTest, TwoDifferentEndsAreInconsistent) {
  EXPECT_FALSE(add(fragment(800, 100, false)));
  expect_dropped(fragment(800, 200, false), Ipv6ReassemblyDrop::Inconsistent);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
  EXPECT_FALSE(add(fragment(800, 100, false)));
  expect_dropped(fragment(1000, 8, true), Ipv6ReassemblyDrop::Inconsistent);
  EXPECT_FALSE(add(fragment(1000, 8, true)));
  expect_dropped(fragment(800, 100, false), Ipv6ReassemblyDrop::Inconsistent);
}

TEST_F(Ipv6ReassemblerTest, KeysBySourceDestinationAndId) {
  EXPECT_FALSE(add(fragment(0, 800, true, 1)));
  EXPECT_FALSE(add(fragment(0, 800, true, 1, false, "fd00::3")));
  EXPECT_FALSE(add(fragment(0, 800, true, 2)));
  EXPECT_EQ(r_->datagrams_in_progress(), 3u);
  expect_whole(add(fragment(800, 1, false, 1, false, "fd00::3")), 801);
  EXPECT_EQ(r_->datagrams_in_progress(), 2u);
}

TEST_F(Ipv6ReassemblerTest, TimesOutAfterSixtySeconds) {
  EXPECT_FALSE(add(fragment(0, 800, true, 1)));
  now_ += 10s;
  EXPECT_FALSE(add(fragment(800, 800, true, 2)));  // no offset-0 fragment
  EXPECT_EQ(r_->next_deadline(), Instant{} + 60s);
  std::vector<std::string> quotes;
  const auto sink = [&](std::string_view q) { quotes.emplace_back(q); };
  r_->tick(Instant{} + 60s - 1ns, sink);
  EXPECT_EQ(r_->datagrams_in_progress(), 2u);
  r_->tick(Instant{} + 60s, sink);
  EXPECT_EQ(r_->datagrams_in_progress(), 1u);
  EXPECT_EQ(drops(Ipv6ReassemblyDrop::Timeout), 1u);
  // §4.5: Time Exceeded quotes the offset-0 fragment, cut to the minimum MTU.
  ASSERT_EQ(quotes.size(), 1u);
  EXPECT_EQ(quotes[0], fragment(0, 800, true, 1).substr(0, wire::icmpv6::kMaxQuote));
  r_->tick(Instant{} + 70s, sink);
  EXPECT_EQ(quotes.size(), 1u);  // no offset-0 fragment: no Time Exceeded
  EXPECT_EQ(drops(Ipv6ReassemblyDrop::Timeout), 2u);
  EXPECT_FALSE(r_->next_deadline());
  EXPECT_EQ(r_->bytes_buffered(), 0u);
}

TEST_F(Ipv6ReassemblerTest, BoundsDatagrams) {
  make({2, 64, 1 << 20, 60s});
  EXPECT_FALSE(add(fragment(0, 8, true, 1)));
  EXPECT_FALSE(add(fragment(0, 8, true, 2)));
  expect_dropped(fragment(0, 8, true, 3), Ipv6ReassemblyDrop::TooManyDatagrams);
}

TEST_F(Ipv6ReassemblerTest, BoundsFragments) {
  make({64, 3, 1 << 20, 60s});
  EXPECT_FALSE(add(fragment(0, 8, true)));
  EXPECT_FALSE(add(fragment(16, 8, true)));
  EXPECT_FALSE(add(fragment(32, 8, true)));
  expect_dropped(fragment(48, 8, true), Ipv6ReassemblyDrop::TooManyFragments);
  EXPECT_EQ(r_->datagrams_in_progress(), 0u);
  EXPECT_EQ(r_->bytes_buffered(), 0u);
}

TEST_F(Ipv6ReassemblerTest, BoundsMemory) {
  make({64, 64, 4096, 60s});
  EXPECT_FALSE(add(fragment(1000 * 8, 8, true, 1)));  // holds 8008 bytes of data: too much
  EXPECT_EQ(last_.drop, Ipv6ReassemblyDrop::OutOfMemory);
  EXPECT_FALSE(add(fragment(0, 2000, true, 2)));
  expect_dropped(fragment(2000, 2048, true, 3), Ipv6ReassemblyDrop::OutOfMemory);
  EXPECT_LE(r_->bytes_buffered(), 4096u);
  expect_whole(add(fragment(2000, 8, false, 2)), 2008);
}

TEST_F(Ipv6ReassemblerTest, EveryDropHasAName) {
  for (size_t i = 0; i < static_cast<size_t>(Ipv6ReassemblyDrop::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<Ipv6ReassemblyDrop>(i)), "?");
  }
}

}  // namespace
}  // namespace tinytcp::net

#include "tcp/sack_scoreboard.hh"

#include <gtest/gtest.h>

#include <vector>

#include "util/random.hh"

namespace tinytcp::tcp {
namespace {

class SackScoreboardTest : public ::testing::Test {
 protected:
  SackScoreboardTest() { board.set_smss(1000); }

  // Ten 1000-byte segments at 1, 1001, ..., 9001.
  void send_ten() {
    for (uint64_t s = 1; s < 10001; s += 1000) {
      board.add(s, 1000, false, false, now);
    }
  }
  uint64_t sack(std::initializer_list<std::pair<uint64_t, uint64_t>> blocks) {
    board.begin_sack();
    uint64_t n = 0;
    for (const auto& [l, r] : blocks) {
      n += board.sack(l, r);
    }
    board.end_sack();
    return n;
  }

  SackScoreboard board;
  Instant now;
};

TEST_F(SackScoreboardTest, PipeIsOutstandingWhenNothingIsKnown) {
  send_ten();
  EXPECT_EQ(board.outstanding_bytes(), 10000u);
  EXPECT_EQ(board.pipe(), 10000u);
  EXPECT_FALSE(board.next_lost().has_value());
}

TEST_F(SackScoreboardTest, CumulativeAckRemovesWholeSegments) {
  send_ten();
  const auto acked = board.acknowledge(3001);
  EXPECT_EQ(acked.bytes, 3000u);
  EXPECT_EQ(acked.segments, 3u);
  EXPECT_EQ(board.size(), 7u);
  EXPECT_EQ(board.front().start, 3001u);
  EXPECT_EQ(board.pipe(), 7000u);
}

TEST_F(SackScoreboardTest, CumulativeAckReportsTheLatestRetransmission) {
  send_ten();
  EXPECT_FALSE(board.acknowledge(1001).newest_retransmission) << "none retransmitted";
  board.mark_all_lost();
  const Instant first = now + std::chrono::seconds(1);
  board.on_retransmitted(1, first);
  board.on_retransmitted(0, first + std::chrono::milliseconds(5));
  const auto acked = board.acknowledge(4001);
  EXPECT_TRUE(acked.any_retransmitted);
  ASSERT_TRUE(acked.newest_retransmission);
  EXPECT_EQ(*acked.newest_retransmission, first + std::chrono::milliseconds(5));
  ASSERT_TRUE(acked.oldest_sent);
  EXPECT_EQ(*acked.oldest_sent, now) << "the segment never retransmitted";
}

TEST_F(SackScoreboardTest, PartialAckTrimsTheFrontSegment) {
  send_ten();
  const auto acked = board.acknowledge(1501);
  EXPECT_EQ(acked.bytes, 1500u);
  EXPECT_EQ(acked.segments, 1u);
  EXPECT_EQ(board.front().start, 1501u);
  EXPECT_EQ(board.front().length, 500u);
  EXPECT_EQ(board.outstanding_bytes(), 8500u);
}

TEST_F(SackScoreboardTest, PartialBlockSacksThePartItCovers) {
  send_ten();
  // 2001 and 3001 whole, 4001 cut: its first half is sacked, the rest not.
  EXPECT_EQ(sack({{2001, 4501}}), 2500u);
  EXPECT_EQ(board.sacked_bytes(), 2500u);
  ASSERT_EQ(board.size(), 11u);
  EXPECT_TRUE(board[2].sacked);
  EXPECT_TRUE(board[3].sacked);
  EXPECT_TRUE(board[4].sacked);
  EXPECT_EQ(board[4].end(), 4501u);
  EXPECT_FALSE(board[5].sacked);
  EXPECT_EQ(board[5].start, 4501u);
  EXPECT_EQ(board.pipe(), 7500u);
  EXPECT_EQ(board.partial_sacks(), 1u);
  // A block inside one segment cuts it twice.
  EXPECT_EQ(sack({{6201, 6701}}), 500u);
  ASSERT_EQ(board.size(), 13u);
  EXPECT_EQ(board[7].end(), 6201u);
  EXPECT_TRUE(board[8].sacked);
  EXPECT_EQ(board[9].start, 6701u);
  EXPECT_EQ(board.outstanding_bytes(), 10000u);
}

TEST_F(SackScoreboardTest, RenegedSacksAreForgotten) {
  send_ten();
  sack({{1, 3001}});
  ASSERT_TRUE(board.front().sacked);
  board.forget_sacks();
  EXPECT_EQ(board.sacked_bytes(), 0u);
  board.mark_all_lost();
  EXPECT_EQ(board.lost_bytes(), 10000u);
  EXPECT_EQ(board.next_lost(), 0u);  // from the left edge
  // Sacked again as the blocks come back.
  EXPECT_EQ(sack({{1, 2001}}), 2000u);
}

TEST_F(SackScoreboardTest, RepeatedBlocksAreNotCountedTwice) {
  send_ten();
  EXPECT_EQ(sack({{2001, 4001}}), 2000u);
  EXPECT_EQ(sack({{2001, 4001}}), 0u);
  EXPECT_EQ(sack({{2001, 5001}}), 1000u);  // grown at the right edge
  EXPECT_EQ(sack({{1001, 5001}}), 1000u);  // and at the left
  EXPECT_EQ(board.sacked_bytes(), 4000u);
}

TEST_F(SackScoreboardTest, GrownBlockSacksTheRestOfASegmentItCut) {
  send_ten();
  EXPECT_EQ(sack({{2001, 3501}}), 1500u);
  EXPECT_EQ(sack({{2001, 4001}}), 500u);  // the rest of 3001
  EXPECT_TRUE(board[2].sacked);
  EXPECT_TRUE(board[4].sacked);
  EXPECT_EQ(board.sacked_bytes(), 2000u);
}

TEST_F(SackScoreboardTest, EverythingBelowTheSackedSegmentsIsJudged) {
  send_ten();
  sack({{3001, 6001}});
  EXPECT_EQ(board.detect_losses(), 3000u);  // 1, 1001 and 2001
}

TEST_F(SackScoreboardTest, IsLostByDupThreshSackedSegments) {
  send_ten();
  board.acknowledge(1001);
  sack({{2001, 4001}});
  EXPECT_EQ(board.detect_losses(), 0u);  // 2 segments, 2000 bytes above 1001
  sack({{2001, 4001}, {5001, 6001}});
  EXPECT_EQ(board.detect_losses(), 1000u);  // RFC 6675 §4: 3 segments above
  EXPECT_TRUE(board[0].lost);
  EXPECT_FALSE(board[3].lost) << "4001 has one sacked segment above";
  EXPECT_EQ(board.next_lost(), std::optional<size_t>(0));
}

TEST_F(SackScoreboardTest, IsLostBySackedBytes) {
  // Large segments: two of them above hold more than (DupThresh - 1) * SMSS.
  for (uint64_t s = 1; s < 4 * 1500 + 1; s += 1500) {
    board.add(s, 1500, false, false, now);
  }
  sack({{1501, 3001}});
  EXPECT_EQ(board.detect_losses(), 0u);  // 1500 bytes
  sack({{1501, 4501}});
  EXPECT_EQ(board.detect_losses(), 1500u);  // 3000 > 2000 bytes
}

TEST_F(SackScoreboardTest, PipeCountsRetransmissions) {
  send_ten();
  board.acknowledge(1001);
  sack({{2001, 6001}});
  board.detect_losses();
  // RFC 6675 SetPipe: 9000 - 4000 sacked - 1000 lost.
  EXPECT_EQ(board.pipe(), 4000u);
  const auto i = board.next_lost();
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(board.pipe_segments(), 4u);
  board.on_retransmitted(*i, now);
  EXPECT_EQ(board.pipe(), 5000u);
  EXPECT_EQ(board.pipe_segments(), 5u);
  EXPECT_FALSE(board.next_lost().has_value()) << "retransmitted once per loss";
  EXPECT_TRUE(board[*i].ever_retransmitted);
}

TEST_F(SackScoreboardTest, LateSackOfARetransmittedSegmentLeavesPipe) {
  send_ten();
  board.acknowledge(1001);
  sack({{2001, 6001}});
  board.detect_losses();
  board.on_retransmitted(0, now);
  sack({{1001, 6001}});
  EXPECT_EQ(board.pipe(), 4000u);
  EXPECT_EQ(board.lost_bytes(), 0u);
  EXPECT_EQ(board.retransmitted_bytes(), 0u);
}

TEST_F(SackScoreboardTest, MarkFrontLostForCumulativeAckRecovery) {
  send_ten();
  EXPECT_TRUE(board.mark_front_lost());
  EXPECT_EQ(board.next_lost(), std::optional<size_t>(0));
  board.on_retransmitted(0, now);
  EXPECT_FALSE(board.mark_front_lost()) << "already retransmitted";
  board.acknowledge(3001);
  EXPECT_TRUE(board.mark_front_lost());  // NewReno: the next hole
  EXPECT_EQ(board.next_lost(), std::optional<size_t>(0));
  EXPECT_EQ(board.front().start, 3001u);
}

TEST_F(SackScoreboardTest, TimeoutMarksEverythingUnsackedLost) {
  send_ten();
  sack({{5001, 7001}});
  board.mark_front_lost();
  board.on_retransmitted(0, now);
  board.mark_all_lost();
  EXPECT_EQ(board.lost_bytes(), 8000u);
  EXPECT_EQ(board.retransmitted_bytes(), 0u);
  EXPECT_EQ(board.pipe(), 0u);
  EXPECT_EQ(board.pipe_segments(), 0u);
  std::vector<uint64_t> order;
  while (const auto i = board.next_lost()) {
    order.push_back(board[*i].start);
    board.on_retransmitted(*i, now);
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 1001, 2001, 3001, 4001, 7001, 8001, 9001}));
}

TEST_F(SackScoreboardTest, SplitKeepsCountsAndOrder) {
  send_ten();
  sack({{5001, 7001}});
  board.mark_all_lost();
  const auto first = board.next_lost();
  ASSERT_EQ(first, 0u);
  board.split(0, 400);  // the lost front segment, in two
  EXPECT_EQ(board.size(), 11u);
  EXPECT_EQ(board.lost_bytes(), 8000u);
  EXPECT_EQ(board.pipe(), 0u);
  EXPECT_EQ(board.pipe_segments(), 0u);
  EXPECT_EQ(board[0].length, 400u);
  EXPECT_EQ(board[1].start, 401u);
  EXPECT_EQ(board[1].length, 600u);
  std::vector<uint64_t> order;
  while (const auto i = board.next_lost()) {
    order.push_back(board[*i].start);
    board.on_retransmitted(*i, now);
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 401, 1001, 2001, 3001, 4001, 7001, 8001, 9001}));
  EXPECT_EQ(board.pipe(), 8000u);
  EXPECT_EQ(board.pipe_segments(), 9u);
  // The pieces leave as a cumulative ACK passes them.
  const auto acked = board.acknowledge(1001);
  EXPECT_EQ(acked.segments, 2u);
  EXPECT_EQ(board.pipe(), 7000u);
  EXPECT_EQ(board.pipe_segments(), 7u);
}

TEST_F(SackScoreboardTest, SplitOfTheLastSegmentKeepsItsFin) {
  board.add(1, 500, false, true, now);
  board.split(0, 200);
  ASSERT_EQ(board.size(), 2u);
  EXPECT_FALSE(board[0].fin);
  EXPECT_TRUE(board[1].fin);
  EXPECT_EQ(board[1].end(), 501u);
  EXPECT_EQ(board.outstanding_bytes(), 500u);
}

TEST_F(SackScoreboardTest, AckedInfoReportsKarnAndSendTimes) {
  board.add(1, 100, false, false, Instant{} + std::chrono::milliseconds(5));
  board.add(101, 100, false, false, Instant{} + std::chrono::milliseconds(7));
  board.on_retransmitted(1, Instant{} + std::chrono::milliseconds(9));
  const auto acked = board.acknowledge(201);
  EXPECT_TRUE(acked.any_retransmitted);
  EXPECT_EQ(acked.oldest_sent, Instant{} + std::chrono::milliseconds(5));
}

// --- RACK entry points (RFC 8985) ---------------------------------------------

TEST_F(SackScoreboardTest, MarkLostByTimeMarksAnUnsackedSegment) {
  send_ten();
  EXPECT_TRUE(board.mark_lost_by_time(2));
  EXPECT_TRUE(board[2].lost);
  EXPECT_EQ(board.lost_bytes(), 1000u);
  EXPECT_EQ(board.pipe(), 9000u);
  // RFC 6675 NextSeg (1): the smallest lost, unsacked sequence number, even
  // when segments before it are not lost (a segment the device refused).
  EXPECT_EQ(board.next_lost(), std::optional<size_t>(2));
  EXPECT_TRUE(board.mark_lost_by_time(0));
  EXPECT_TRUE(board.mark_lost_by_time(1));
  EXPECT_EQ(board.next_lost(), std::optional<size_t>(0));
}

TEST_F(SackScoreboardTest, MarkLostByTimeRefusesSackedAndPendingSegments) {
  send_ten();
  sack({{1001, 2001}});
  EXPECT_FALSE(board.mark_lost_by_time(1));  // sacked
  EXPECT_TRUE(board.mark_lost_by_time(0));
  EXPECT_FALSE(board.mark_lost_by_time(0));  // lost and not yet retransmitted
  EXPECT_EQ(board.lost_bytes(), 1000u);
  EXPECT_EQ(board.pipe(), 8000u);
}

TEST_F(SackScoreboardTest, LostRetransmissionIsRetransmittedAgainWithPipeKept) {
  send_ten();
  ASSERT_TRUE(board.mark_lost_by_time(0));
  ASSERT_EQ(board.next_lost(), std::optional<size_t>(0));
  board.on_retransmitted(0, now);
  EXPECT_EQ(board.pipe(), 10000u);  // the retransmission is in flight again
  EXPECT_EQ(board.retransmitted_bytes(), 1000u);
  EXPECT_EQ(board.next_lost(), std::nullopt);

  EXPECT_TRUE(board.mark_lost_by_time(0));  // the retransmission was lost too
  EXPECT_TRUE(board[0].lost);
  EXPECT_FALSE(board[0].rexmit);
  EXPECT_EQ(board.retransmitted_bytes(), 0u);
  EXPECT_EQ(board.lost_bytes(), 1000u);
  EXPECT_EQ(board.pipe(), 9000u);
  EXPECT_EQ(board.pipe_segments(), 9u);
  EXPECT_TRUE(board.has_lost());
  EXPECT_EQ(board.next_lost(), std::optional<size_t>(0));

  board.on_retransmitted(0, now);
  EXPECT_EQ(board.pipe(), 10000u);
  const auto acked = board.acknowledge(1001);
  EXPECT_EQ(acked.bytes, 1000u);
  EXPECT_EQ(board.pipe(), 9000u);
  EXPECT_EQ(board.lost_bytes(), 0u);
  EXPECT_EQ(board.retransmitted_bytes(), 0u);
}

TEST_F(SackScoreboardTest, LostRetransmissionBehindTheCursorIsFoundAgain) {
  send_ten();
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(board.mark_lost_by_time(i));
  }
  while (const auto i = board.next_lost()) {
    board.on_retransmitted(*i, now);
  }
  ASSERT_TRUE(board.mark_lost_by_time(1));
  EXPECT_EQ(board.next_lost(), std::optional<size_t>(1));
  EXPECT_EQ(board.pipe(), 9000u);
}

TEST_F(SackScoreboardTest, SackOfARetransmissionMarkedLostAgainLeavesPipe) {
  send_ten();
  ASSERT_TRUE(board.mark_lost_by_time(0));
  board.on_retransmitted(0, now);
  ASSERT_TRUE(board.mark_lost_by_time(0));
  EXPECT_EQ(sack({{1, 1001}}), 1000u);
  EXPECT_EQ(board.lost_bytes(), 0u);
  EXPECT_EQ(board.pipe(), 9000u);
  EXPECT_EQ(board.next_lost(), std::nullopt);
}

TEST_F(SackScoreboardTest, DeliveryReportsTheNewestSentSegment) {
  for (uint64_t i = 0; i < 4; ++i) {
    board.add(1 + i * 1000, 1000, false, false, Instant{} + std::chrono::milliseconds(i));
  }
  board.begin_delivery(Instant{} + std::chrono::seconds(1));
  board.acknowledge(1001);
  sack({{2001, 3001}});
  const auto& d = board.delivery();
  EXPECT_EQ(d.newest_sent, Instant{} + std::chrono::milliseconds(2));
  EXPECT_EQ(d.newest_end, 3001u);
  EXPECT_EQ(d.lowest_original_end, 1001u);
  EXPECT_EQ(d.highest_end, 3001u);

  // Already sacked: not delivered again by the cumulative ACK.
  board.begin_delivery(Instant{} + std::chrono::seconds(1));
  board.acknowledge(3001);
  EXPECT_EQ(board.delivery().newest_sent, Instant{} + std::chrono::milliseconds(1));
  EXPECT_EQ(board.delivery().newest_end, 2001u);
}

TEST_F(SackScoreboardTest, DeliverySkipsAmbiguousRetransmissions) {
  board.add(1, 1000, false, false, Instant{});
  board.add(1001, 1000, false, false, Instant{} + std::chrono::milliseconds(1));
  board.on_retransmitted(1, Instant{} + std::chrono::milliseconds(50));
  board.begin_delivery(Instant{} + std::chrono::milliseconds(40));
  sack({{1001, 2001}});
  EXPECT_FALSE(board.delivery().newest_sent.has_value());  // sent after the bound
  EXPECT_EQ(board.delivery().highest_end, 2001u);
  EXPECT_EQ(board.delivery().lowest_original_end, UINT64_MAX);  // a retransmission

  board.begin_delivery(Instant{} + std::chrono::milliseconds(50));
  board.acknowledge(1001);
  EXPECT_EQ(board.delivery().newest_sent, Instant{});
}

// Reference model: the RFC 6675 definitions computed from scratch.
struct ModelSegment {
  uint64_t start;
  uint64_t end;
  bool sacked = false;
};

TEST(SackScoreboardPropertyTest, MatchesTheRfcDefinitionsUnderRandomAcks) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 0x5ac6);
  SCOPED_TRACE(::testing::Message() << "TINYTCP_SEED=" << seed);
  Rng rng(seed);
  constexpr uint32_t kSmss = 100;
  for (int run = 0; run < 50; ++run) {
    SackScoreboard board;
    board.set_smss(kSmss);
    std::vector<ModelSegment> model;
    uint64_t next = 1;
    uint64_t una = 1;
    for (int step = 0; step < 200; ++step) {
      const uint64_t op = rng.uniform(0, 9);
      if (op < 4) {
        const auto len = static_cast<uint32_t>(rng.uniform(1, 2 * kSmss));
        board.add(next, len, false, false, Instant{});
        model.push_back({next, next + len});
        next += len;
      } else if (op < 5 && next > una) {
        una = rng.uniform(una, next);
        board.acknowledge(una);
        while (!model.empty() && model.front().end <= una) {
          model.erase(model.begin());
        }
        if (!model.empty() && model.front().start < una) {
          model.front().start = una;
        }
      } else if (next > una) {
        board.begin_sack();
        for (uint64_t b = rng.uniform(1, 4); b > 0; --b) {
          const uint64_t l = rng.uniform(una, next);
          const uint64_t r = rng.uniform(l, next);
          board.sack(l, r);
          // A block cuts an unsacked segment it covers part of.
          for (size_t i = 0; l < r && i < model.size(); ++i) {
            for (const uint64_t edge : {l, r}) {
              ModelSegment& m = model[i];
              if (!m.sacked && m.start < edge && edge < m.end) {
                model.insert(model.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                             ModelSegment{edge, m.end});
                model[i].end = edge;
              }
            }
          }
          for (auto& m : model) {
            if (m.start >= l && m.end <= r) {
              m.sacked = true;
            }
          }
        }
        board.end_sack();
      }
      board.detect_losses();
      ASSERT_EQ(board.size(), model.size());
      uint64_t pipe = 0;
      for (size_t i = 0; i < model.size(); ++i) {
        const auto& m = model[i];
        ASSERT_EQ(board[i].start, m.start);
        ASSERT_EQ(board[i].end(), m.end);
        ASSERT_EQ(board[i].sacked, m.sacked) << "segment " << i;
        // RFC 6675 §4 IsLost, per segment.
        uint64_t above_segments = 0;
        uint64_t above_bytes = 0;
        for (size_t j = i + 1; j < model.size(); ++j) {
          if (model[j].sacked) {
            ++above_segments;
            above_bytes += model[j].end - model[j].start;
          }
        }
        const bool lost = !m.sacked && (above_segments >= SackScoreboard::kDupThresh ||
                                        above_bytes > (SackScoreboard::kDupThresh - 1) * kSmss);
        ASSERT_EQ(board[i].lost, lost) << "segment " << i;
        if (!m.sacked && !lost) {
          pipe += m.end - m.start;
        }
      }
      ASSERT_EQ(board.pipe(), pipe);
      uint64_t pipe_segments = 0;
      for (size_t i = 0; i < board.size(); ++i) {
        pipe_segments += (!board[i].sacked && !board[i].lost) ? 1u : 0u;
      }
      ASSERT_EQ(board.pipe_segments(), pipe_segments);
    }
  }
}

}  // namespace
}  // namespace tinytcp::tcp

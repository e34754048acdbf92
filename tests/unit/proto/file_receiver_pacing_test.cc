// FileReceiver's pacing against a hostile sender (issue 21 item 4): whole-file
// hashing goes to a HashRunner (beside the app's event loop) while the
// sender's input is held back, and OFFERs are rate limited per session.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "proto/file_receiver.hh"
#include "proto/hash_runner.hh"
#include "unit/proto/memory_files.hh"

namespace tinytcp::proto {
namespace {

using namespace std::chrono_literals;

std::string frame(const Message& m) {
  std::string out;
  encode(m, out);
  return out;
}

Offer offer(std::string name, uint64_t size, const Sha256Digest& id = {}) {
  Offer o;
  o.name = std::move(name);
  o.size = size;
  o.file_id = id;
  return o;
}

std::vector<Message> replies(FileReceiver& r) {
  FrameDecoder decoder;
  std::vector<Message> out;
  std::string_view bytes = r.output();
  while (!bytes.empty()) {
    bytes.remove_prefix(decoder.feed(bytes));
    if (auto m = decoder.take(); m && *m) {
      out.push_back(**m);
    }
  }
  r.consume_output(r.output().size());
  return out;
}

// Runs its job only when the test says so (another thread, in an app).
class ManualRunner : public HashRunner {
 public:
  void start(Job job) override {
    ++started;
    job_ = std::move(job);
  }
  std::optional<Digest> result() override {
    auto r = std::move(result_);
    result_.reset();
    return r;
  }
  void abandon() override {
    run();
    result_.reset();
  }
  bool running() const { return static_cast<bool>(job_); }
  void run() {
    if (job_) {
      result_ = job_();
      job_ = nullptr;
    }
  }
  int started = 0;

 private:
  Job job_;
  std::optional<Digest> result_;
};

class FileReceiverPacingTest : public ::testing::Test {
 protected:
  FileReceiverPacingTest() { policy.inline_hash_bytes = 0; }  // every hash to the runner

  MemorySink sink;
  ReceiverPolicy policy;
  ManualRunner runner;
  Instant now{};
};

TEST_F(FileReceiverPacingTest, ConfirmingAnExistingFileHashesItInTheRunner) {
  const std::string data(5000, 'e');
  sink.files["big"] = data;
  FileReceiver r(sink, policy, nullptr, &runner);
  r.on_input(frame(offer("big", data.size())));
  ASSERT_TRUE(std::holds_alternative<Accept>(replies(r).at(0)));
  r.on_input(frame(Start{data.size()}) + frame(Trailer{sha256(data)}));
  // Nothing hashed on this thread; no RESULT until the job is done.
  EXPECT_TRUE(runner.running());
  EXPECT_EQ(sink.hashed_existing, 0);
  EXPECT_TRUE(replies(r).empty());
  EXPECT_FALSE(r.wants_input());
  const std::string bye = frame(Bye{});
  r.on_input(bye);  // held, not parsed while the job runs
  EXPECT_EQ(r.state(), FileReceiver::State::AwaitTrailer);
  runner.run();
  EXPECT_EQ(sink.hashed_existing, 1);
  r.poll(now);
  const auto got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  const auto* result = std::get_if<Result>(&got[0]);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->status, ResultStatus::Ok);
  EXPECT_EQ(result->received_sha256, sha256(data));
  EXPECT_EQ(r.state(), FileReceiver::State::Closed);  // the held BYE, parsed now
  EXPECT_TRUE(r.files().back().already_present);
}

TEST_F(FileReceiverPacingTest, ResumingHashesThePrefixInTheRunner) {
  const std::string data(3000, 'p');
  const Sha256Digest id = sha256("id");
  sink.partials["f." + to_hex(id)] = data.substr(0, 1000);
  FileReceiver r(sink, policy, nullptr, &runner);
  r.on_input(frame(offer("f", data.size(), id)));
  EXPECT_TRUE(replies(r).empty());  // the ACCEPT waits for the prefix's digest
  EXPECT_FALSE(r.wants_input());
  runner.run();
  r.poll(now);
  const auto got = replies(r);
  ASSERT_EQ(got.size(), 1u);
  const auto* accept = std::get_if<Accept>(&got[0]);
  ASSERT_NE(accept, nullptr);
  EXPECT_EQ(accept->resume_offset, 1000u);
  EXPECT_EQ(accept->prefix_sha256, sha256(data.substr(0, 1000)));
  r.on_input(frame(Start{1000}) + data.substr(1000) + frame(Trailer{sha256(data)}));
  const auto result = replies(r);
  ASSERT_EQ(result.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<Result>(result[0]));
  EXPECT_EQ(std::get<Result>(result[0]).status, ResultStatus::Ok);
  EXPECT_EQ(sink.files["f"], data);
}

TEST_F(FileReceiverPacingTest, SmallHashesStayInline) {
  policy.inline_hash_bytes = 1 << 20;
  sink.files["small"] = "abc";
  FileReceiver r(sink, policy, nullptr, &runner);
  r.on_input(frame(offer("small", 3)) + frame(Start{3}) + frame(Trailer{sha256("abc")}));
  EXPECT_EQ(runner.started, 0);
  const auto got = replies(r);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(std::get<Result>(got[1]).status, ResultStatus::Ok);
}

TEST_F(FileReceiverPacingTest, AReceiverGoingAwayAbandonsItsJob) {
  sink.files["big"] = "0123456789";
  {
    FileReceiver r(sink, policy, nullptr, &runner);
    r.on_input(frame(offer("big", 10)) + frame(Start{10}) + frame(Trailer{}));
    EXPECT_TRUE(runner.running());
  }
  EXPECT_FALSE(runner.running());
  EXPECT_FALSE(runner.result().has_value());
}

TEST_F(FileReceiverPacingTest, OffersAreRateLimitedOncePollGivesTheTime) {
  policy.offer_burst = 5;
  policy.offers_per_second = 10;
  FileReceiver r(sink, policy);
  r.poll(now);
  std::string burst;
  for (int i = 0; i < 20; ++i) {
    burst += frame(offer("d" + std::to_string(i) + "/", 0));
  }
  r.on_input(burst);
  EXPECT_EQ(replies(r).size(), 5u);
  EXPECT_FALSE(r.wants_input());
  ASSERT_TRUE(r.time_until_ready().has_value());
  EXPECT_EQ(*r.time_until_ready(), 100ms);
  r.poll(now + 50ms);
  EXPECT_EQ(replies(r).size(), 0u);
  r.poll(now + 100ms);
  EXPECT_EQ(replies(r).size(), 1u);
  r.poll(now + 2s);
  EXPECT_EQ(replies(r).size(), 5u);  // the burst again, no more
  r.poll(now + 3s);
  EXPECT_EQ(replies(r).size(), 5u);
  EXPECT_EQ(r.files().size(), 16u);
  EXPECT_EQ(r.state(), FileReceiver::State::AwaitOffer);
}

}  // namespace
}  // namespace tinytcp::proto

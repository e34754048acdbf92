// NameClaims and ClaimingFileSink: no two receiving sessions write one file.

#include "common/name_claims.hh"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

namespace tinytcp::apps {
namespace {

// An in-memory sink: partial files by name, what was written to each.
struct FakeFiles {
  std::map<std::string, std::string> partial;
  int closed = 0;  // sinks destroyed (their files closed)
};

class FakeSink : public proto::FileSink {
 public:
  explicit FakeSink(FakeFiles& files) : files_(files) {}
  ~FakeSink() override { ++files_.closed; }
  bool exists(std::string_view) override { return false; }
  std::optional<uint64_t> existing_size(std::string_view) override { return std::nullopt; }
  Expected<Sha256Digest, std::string> hash_existing(std::string_view) override {
    return make_unexpected(std::string("none"));
  }
  Expected<bool, std::string> make_directory(std::string_view) override { return true; }
  uint64_t free_space() override { return UINT64_MAX; }
  Expected<proto::PartialFile, std::string> open(std::string_view path,
                                                 const Sha256Digest&) override {
    current_ = std::string(path);
    return proto::PartialFile{files_.partial[current_].size()};
  }
  Expected<bool, std::string> hash_prefix(uint64_t, proto::ContentHash&) override { return true; }
  Expected<bool, std::string> truncate(uint64_t n) override {
    files_.partial[current_].resize(n);
    return true;
  }
  Expected<bool, std::string> write(std::string_view data) override {
    files_.partial[current_] += data;
    return true;
  }
  Expected<bool, std::string> commit() override { return true; }
  void discard() override { files_.partial.erase(current_); }

 private:
  FakeFiles& files_;
  std::string current_;
};

const stack::IpAddress kMachineA = wire::Ipv4Address{0x0a000001};
const stack::IpAddress kMachineB = wire::Ipv4Address{0x0a000002};
// IPv6 senders: one whose address ends in A's 32 bits, and another.
const stack::IpAddress kMachineV6 =
    wire::Ipv6Address::from_groups({0xfd00, 0, 0, 0, 0, 0, 0x0a00, 0x0001});
const stack::IpAddress kMachineV6b =
    wire::Ipv6Address::from_groups({0xfd00, 0, 0, 0, 0, 0, 0x0a00, 0x0002});

class NameClaimsTest : public ::testing::Test {
 protected:
  std::unique_ptr<ClaimingFileSink> session(const stack::IpAddress& address) {
    return std::make_unique<ClaimingFileSink>(claims_, std::make_unique<FakeSink>(files_), address);
  }
  NameClaims claims_;
  FakeFiles files_;
  Sha256Digest id_{};
};

TEST_F(NameClaimsTest, AnotherMachinesSessionIsRefusedWhileTheNameIsHeld) {
  auto first = session(kMachineA);
  auto second = session(kMachineB);
  ASSERT_TRUE(first->open("f.bin", id_));
  ASSERT_TRUE(first->write("aaaa"));
  const auto refused = second->open("f.bin", id_);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("busy: f.bin is being received from another sender"),
            std::string::npos)
      << refused.error();
  EXPECT_EQ(claims_.refused(), 1u);
  // The holder goes on undisturbed; other names are free.
  EXPECT_TRUE(first->write("bbbb"));
  EXPECT_FALSE(first->taken_over());
  EXPECT_TRUE(second->open("g.bin", id_));
  EXPECT_EQ(files_.partial["f.bin"], "aaaabbbb");
  // Once the holder committed, the name is free again.
  ASSERT_TRUE(first->commit());
  EXPECT_TRUE(second->open("f.bin", id_));
}

TEST_F(NameClaimsTest, ANewSessionFromTheSameMachineTakesOverAtOnce) {
  auto dead = session(kMachineA);
  ASSERT_TRUE(dead->open("f.bin", id_));
  ASSERT_TRUE(dead->write("aaaa"));
  auto rerun = session(kMachineA);
  const auto opened = rerun->open("f.bin", id_);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->held, 4u);  // resumes from what the dead session wrote
  EXPECT_TRUE(dead->taken_over());
  EXPECT_EQ(files_.closed, 1);  // the old session's file was closed first
  EXPECT_EQ(claims_.taken_over(), 1u);
  // The old session can write nothing more into the file.
  const auto late = dead->write("XXXX");
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().find("taken over"), std::string::npos);
  ASSERT_TRUE(rerun->write("bbbb"));
  EXPECT_EQ(files_.partial["f.bin"], "aaaabbbb");
  // Destroying the old session does not free the new one's claim.
  dead.reset();
  auto other = session(kMachineB);
  EXPECT_FALSE(other->open("f.bin", id_));
}

// Senders over IPv6 are machines too: told apart by their whole address,
// never mixed with an IPv4 one.
TEST_F(NameClaimsTest, Ipv6SendersAreToldApartByTheirWholeAddress) {
  auto v4 = session(kMachineA);
  ASSERT_TRUE(v4->open("f.bin", id_));
  auto v6 = session(kMachineV6);
  EXPECT_FALSE(v6->open("f.bin", id_));
  ASSERT_TRUE(v6->open("g.bin", id_));
  auto other = session(kMachineV6b);
  EXPECT_FALSE(other->open("g.bin", id_));
  auto rerun = session(kMachineV6);
  EXPECT_TRUE(rerun->open("g.bin", id_));
  EXPECT_TRUE(v6->taken_over());
  EXPECT_EQ(claims_.refused(), 2u);
}

TEST_F(NameClaimsTest, AnEndedSessionFreesItsNames) {
  {
    auto gone = session(kMachineA);
    ASSERT_TRUE(gone->open("f.bin", id_));
  }
  EXPECT_EQ(claims_.size(), 0u);
  auto next = session(kMachineB);
  EXPECT_TRUE(next->open("f.bin", id_));
  next->discard();
  EXPECT_EQ(claims_.size(), 0u);
}

}  // namespace
}  // namespace tinytcp::apps

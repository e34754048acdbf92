// PosixFileSink under a hostile sender, and in a failing environment (issue
// 21 items 4, 5, 6): offers that never bring a byte leave no partial file,
// the receiver's own partial files cannot be named in an OFFER, stale
// partial files age out, and a directory fsync that fails fails the commit.

#include "common/posix_file.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "proto/file_receiver.hh"

namespace tinytcp::apps {
namespace {

namespace fs = std::filesystem;

std::string frame(const proto::Message& m) {
  std::string out;
  proto::encode(m, out);
  return out;
}

proto::Offer offer(std::string name, uint64_t size, const Sha256Digest& id = sha256("id")) {
  proto::Offer o;
  o.name = std::move(name);
  o.size = size;
  o.file_id = id;
  return o;
}

std::vector<proto::Message> replies(proto::FileReceiver& r) {
  proto::FrameDecoder decoder;
  std::vector<proto::Message> out;
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

std::vector<std::string> partial_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".part") {
      out.push_back(fs::relative(e.path(), dir).string());
    }
  }
  return out;
}

void age(const fs::path& p, std::chrono::seconds by) {
  const auto t = fs::last_write_time(p) - by;
  fs::last_write_time(p, t);
}

class PosixFileSinkHostileTest : public ::testing::Test {
 protected:
  PosixFileSinkHostileTest() {
    char tmpl[] = "/tmp/tt-sink-hostile.XXXXXX";
    root_ = ::mkdtemp(tmpl);
    out_ = root_ / "out";
    fs::create_directories(out_);
  }
  ~PosixFileSinkHostileTest() override { fs::remove_all(root_); }

  // One session that leaves `held` bytes of `name` in a partial file.
  fs::path leave_partial(const std::string& name, const std::string& held) {
    PosixFileSink sink(out_.string(), false);
    proto::FileReceiver r(sink, proto::ReceiverPolicy{});
    r.on_input(frame(offer(name, held.size() + 100)));
    replies(r);
    r.on_input(frame(proto::Start{0}));
    r.on_input(held);
    const auto slash = name.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : name.substr(0, slash);
    const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
    return out_ / dir / PosixFileSink::partial_name(base, sha256("id"));
  }

  fs::path root_, out_;
};

TEST_F(PosixFileSinkHostileTest, OffersThatNeverBringAByteLeaveNoPartialFile) {
  {
    PosixFileSink sink(out_.string(), false);
    proto::FileReceiver r(sink, proto::ReceiverPolicy{});
    for (int i = 0; i < 3; ++i) {
      r.on_input(frame(offer("d/f" + std::to_string(i), 1000)));
      ASSERT_TRUE(std::holds_alternative<proto::Accept>(replies(r).at(0)));
      r.on_input(frame(proto::Decline{}));
    }
    r.on_input(frame(offer("d/last", 1000)));  // and the session ends here
    replies(r);
  }
  EXPECT_EQ(partial_files(out_), std::vector<std::string>{});
}

TEST_F(PosixFileSinkHostileTest, PartialFileWithBytesStaysForResume) {
  const fs::path partial = leave_partial("keep", "some bytes");
  EXPECT_TRUE(fs::exists(partial));
  EXPECT_EQ(fs::file_size(partial), 10u);
}

// A sender that names another session's hidden partial file learns nothing
// about it (not its size, not its SHA-256) and cannot touch it.
TEST_F(PosixFileSinkHostileTest, OwnPartialFilesCannotBeOffered) {
  const fs::path partial = leave_partial("d/secret", "hidden bytes");
  ASSERT_TRUE(fs::exists(partial));
  const std::string name = "d/" + partial.filename().string();
  EXPECT_TRUE(PosixFileSink::is_partial_name(partial.filename().string()));
  for (const bool force : {false, true}) {
    PosixFileSink sink(out_.string(), force);
    proto::ReceiverPolicy policy;
    policy.force = force;
    proto::FileReceiver r(sink, policy);
    r.on_input(frame(offer(name, fs::file_size(partial))));
    const auto got = replies(r);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(std::holds_alternative<proto::Reject>(got[0])) << "force=" << force;
    r.on_input(frame(offer(name + "/", 0)));  // nor as a directory
    EXPECT_TRUE(std::holds_alternative<proto::Reject>(replies(r).at(0))) << "force=" << force;
  }
  EXPECT_EQ(fs::file_size(partial), 12u);
  EXPECT_TRUE(fs::is_regular_file(partial));
}

TEST_F(PosixFileSinkHostileTest, StalePartialFilesAgeOut) {
  const fs::path old_top = leave_partial("old", "abc");
  const fs::path old_deep = leave_partial("a/b/c/old", "abc");
  const fs::path fresh = leave_partial("a/fresh", "abc");
  std::ofstream(out_ / "a" / ".not-ours.part") << "a user's file";
  std::ofstream(out_ / "a" / "plain") << "a user's file";
  for (const auto& p : {old_top, old_deep, out_ / "a" / ".not-ours.part", out_ / "a" / "plain"}) {
    age(p, std::chrono::hours(48));
  }
  fs::create_directory_symlink(root_, out_ / "a" / "loop");  // never followed
  PosixFileSink sink(out_.string(), false);
  EXPECT_EQ(sink.remove_stale_partials(std::chrono::hours(24)), 2u);
  EXPECT_FALSE(fs::exists(old_top));
  EXPECT_FALSE(fs::exists(old_deep));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_TRUE(fs::exists(out_ / "a" / ".not-ours.part"));
  EXPECT_TRUE(fs::exists(out_ / "a" / "plain"));
}

// A sink whose directory fsync fails (EIO), as on a failing disk.
class FailingDirectorySyncSink : public PosixFileSink {
 public:
  using PosixFileSink::PosixFileSink;

 protected:
  int sync_directory(int /*fd*/) override {
    errno = EIO;
    return -1;
  }
};

TEST_F(PosixFileSinkHostileTest, FailedDirectoryFsyncFailsTheCommit) {
  FailingDirectorySyncSink sink(out_.string(), false);
  ASSERT_TRUE(sink.open("f", sha256("id")));
  ASSERT_TRUE(sink.write("abc"));
  const auto committed = sink.commit();
  ASSERT_FALSE(committed);
  EXPECT_NE(committed.error().find("Input/output error"), std::string::npos) << committed.error();
}

// One OFFER of a deep path makes a directory (an inode, an fsync) per
// level: the directories one session may create are capped.
TEST_F(PosixFileSinkHostileTest, NewDirectoriesPerSessionAreCapped) {
  fs::create_directories(out_ / "old" / "tree");
  PosixFileSink sink(out_.string(), false);
  sink.set_max_new_directories(5);
  const auto made = sink.make_directory("a/b/c/d/e/f/g/h");
  ASSERT_FALSE(made);
  EXPECT_NE(made.error().find("at most 5 new directories"), std::string::npos) << made.error();
  EXPECT_EQ(sink.directories_created(), 5u);
  EXPECT_TRUE(fs::is_directory(out_ / "a/b/c/d/e"));
  EXPECT_FALSE(fs::exists(out_ / "a/b/c/d/e/f"));
  EXPECT_TRUE(sink.make_directory("a/b/c"));  // existing ones still do
  EXPECT_TRUE(sink.make_directory("old/tree"));
  EXPECT_TRUE(sink.open("old/tree/file", sha256("id")));
}

}  // namespace
}  // namespace tinytcp::apps

// PosixFileSink under the file-transfer receiver: trees are recreated below
// the output directory and never anywhere else, whatever symlinks or files
// were planted in the output tree. Real files in a temporary directory; the
// two protocol endpoints talk in memory.

#include "common/posix_file.hh"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "proto/content_hash.hh"
#include "proto/file_receiver.hh"
#include "proto/file_sender.hh"

namespace tinytcp::apps {
namespace {

namespace fs = std::filesystem;

class StringSource : public proto::FileSource {
 public:
  explicit StringSource(std::string data) : data_(std::move(data)) {}
  uint64_t size() const override { return data_.size(); }
  Expected<size_t, std::string> read(uint64_t offset, char* out, size_t n) override {
    if (offset >= data_.size()) {
      return size_t{0};
    }
    const size_t k = std::min<size_t>(n, data_.size() - offset);
    data_.copy(out, k, offset);
    return k;
  }

 private:
  std::string data_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& data) {
  std::ofstream(p, std::ios::binary) << data;
}

// Every path below `dir`, relative, sorted.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class PosixFileSinkTest : public ::testing::Test {
 protected:
  PosixFileSinkTest() {
    char tmpl[] = "/tmp/tt-sink-test.XXXXXX";
    root_ = ::mkdtemp(tmpl);
    out_ = root_ / "out";
    outside_ = root_ / "outside";
    fs::create_directories(out_);
    fs::create_directories(outside_);
  }
  ~PosixFileSinkTest() override { fs::remove_all(root_); }

  void pump(proto::FileSender& s, proto::FileReceiver& r) {
    for (int i = 0; i < 100'000; ++i) {
      bool moved = false;
      if (const auto out = s.output(); !out.empty()) {
        const std::string piece(out);
        s.consume_output(piece.size());
        r.on_input(piece);
        moved = true;
      }
      if (const auto back = r.output(); !back.empty()) {
        const std::string piece(back);
        r.consume_output(piece.size());
        s.on_input(piece);
        moved = true;
      }
      if (!moved) {
        return;
      }
    }
  }

  // One session: directory entries (ending in '/') and files.
  std::vector<proto::FileSender::Outcome> send(
      const std::vector<std::pair<std::string, std::string>>& entries, bool force = false) {
    PosixFileSink sink(out_.string(), force);
    proto::ReceiverPolicy policy;
    policy.force = force;
    proto::FileReceiver receiver(sink, policy);
    proto::FileSender sender;
    std::vector<proto::FileSender::Outcome> outcomes;
    for (const auto& [path, data] : entries) {
      StringSource source(data);
      if (proto::is_directory_path(path)) {
        sender.offer_directory(path);
      } else {
        sender.offer(source, path, sha256(path + data), /*confirm_identical=*/true);
      }
      pump(sender, receiver);
      outcomes.push_back(sender.outcome());
      EXPECT_EQ(sender.state(), proto::FileSender::State::Idle) << path;
    }
    sender.finish_stream();
    pump(sender, receiver);
    EXPECT_EQ(receiver.state(), proto::FileReceiver::State::Closed);
    return outcomes;
  }

  static void expect_refused(const proto::FileSender::Outcome& o, proto::RejectReason why) {
    EXPECT_FALSE(o.ok);
    ASSERT_TRUE(o.rejected.has_value()) << o.error;
    EXPECT_EQ(*o.rejected, why) << o.error;
  }

  void write_failure_keeps_a_prefix(rlim_t limit);

  fs::path root_, out_, outside_;
};

TEST_F(PosixFileSinkTest, FileIdCoversTheSizeAndBothEdges) {
  constexpr size_t kEdge = PosixFileSource::kIdEdgeBytes;
  const auto id_of = [&](const std::string& data) {
    const fs::path p = root_ / "id-probe";
    spit(p, data);
    return PosixFileSource(p.string()).file_id();
  };
  std::string data(3 * kEdge + 17, 'a');
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>('a' + i % 23);
  }
  const auto id = id_of(data);
  // Exactly: SHA-256 over the decimal size, the first edge, the last edge.
  EXPECT_EQ(id, sha256(std::to_string(data.size()) + data.substr(0, kEdge) +
                       data.substr(data.size() - kEdge)));
  EXPECT_EQ(id_of(data), id);  // stable

  std::string changed = data;
  changed[0] ^= 1;  // first edge
  EXPECT_NE(id_of(changed), id);
  changed = data;
  changed[data.size() - 1] ^= 1;  // last edge
  EXPECT_NE(id_of(changed), id);
  changed = data;
  // Between the edges: the same id (resume checks the prefix's SHA-256, not
  // the id).
  changed[kEdge + 5] ^= 1;
  EXPECT_EQ(id_of(changed), id);
  EXPECT_NE(id_of(data + "x"), id);  // the size

  // A short file: both reads cover it whole.
  EXPECT_EQ(id_of("tiny"), sha256("4tinytiny"));
  EXPECT_EQ(id_of(""), sha256("0"));
}

TEST_F(PosixFileSinkTest, RecreatesATree) {
  const std::string unicode = "r\xc3\xa9sum\xc3\xa9 \xe2\x98\x83.txt";
  const auto outcomes = send({{"t/", ""},
                              {"t/empty/", ""},
                              {"t/empty/nested/", ""},
                              {"t/a.txt", "alpha"},
                              {"t/sub dir/" + unicode, "unicode"},
                              {"t/sub dir/zero", ""}});
  for (const auto& o : outcomes) {
    EXPECT_TRUE(o.ok) << o.error;
  }
  EXPECT_EQ(slurp(out_ / "t/a.txt"), "alpha");
  EXPECT_EQ(slurp(out_ / "t/sub dir" / unicode), "unicode");
  EXPECT_EQ(fs::file_size(out_ / "t/sub dir/zero"), 0u);
  EXPECT_TRUE(fs::is_directory(out_ / "t/empty/nested"));
  EXPECT_EQ(listing(out_),
            (std::vector<std::string>{"t", "t/a.txt", "t/empty", "t/empty/nested", "t/sub dir",
                                      "t/sub dir/" + unicode, "t/sub dir/zero"}));  // no .part left
}

TEST_F(PosixFileSinkTest, SymlinkToOutsideIsNeverFollowed) {
  fs::create_directory_symlink(outside_, out_ / "t");  // the tree's root
  fs::create_directories(out_ / "u");
  fs::create_directory_symlink(outside_, out_ / "u/sub");         // deeper down
  fs::create_directory_symlink("../../outside", out_ / "u/rel");  // relative
  const auto outcomes = send({{"t/", ""},
                              {"t/a.txt", "escaped?"},
                              {"t/new/b.txt", "escaped?"},
                              {"u/sub/c.txt", "escaped?"},
                              {"u/sub/", ""},
                              {"u/rel/d/e.txt", "escaped?"},
                              {"u/fine.txt", "inside"}});
  for (size_t i = 0; i + 1 < outcomes.size(); ++i) {
    expect_refused(outcomes[i], proto::RejectReason::BadDirectory);
    EXPECT_NE(outcomes[i].error.find("symlink"), std::string::npos) << outcomes[i].error;
  }
  EXPECT_TRUE(outcomes.back().ok) << outcomes.back().error;
  EXPECT_TRUE(fs::is_empty(outside_));
  EXPECT_EQ(slurp(out_ / "u/fine.txt"), "inside");
}

TEST_F(PosixFileSinkTest, SymlinkAsTheFileItselfIsNotWrittenThrough) {
  spit(outside_ / "target", "precious");
  fs::create_directories(out_ / "t");
  fs::create_symlink(outside_ / "target", out_ / "t/link");
  auto outcomes = send({{"t/link", "precious"}});  // same bytes, even
  expect_refused(outcomes[0], proto::RejectReason::Exists);
  // --force replaces the link itself, never the file it points to.
  outcomes = send({{"t/link", "new"}}, /*force=*/true);
  EXPECT_TRUE(outcomes[0].ok) << outcomes[0].error;
  EXPECT_EQ(slurp(outside_ / "target"), "precious");
  EXPECT_FALSE(fs::is_symlink(out_ / "t/link"));
  EXPECT_EQ(slurp(out_ / "t/link"), "new");
}

TEST_F(PosixFileSinkTest, FileInTheWayOfADirectoryIsRefused) {
  fs::create_directories(out_ / "t");
  spit(out_ / "t/x", "a file");
  const auto outcomes = send({{"t/x/", ""}, {"t/x/y", "data"}});
  expect_refused(outcomes[0], proto::RejectReason::BadDirectory);
  expect_refused(outcomes[1], proto::RejectReason::BadDirectory);
  EXPECT_EQ(slurp(out_ / "t/x"), "a file");
}

TEST_F(PosixFileSinkTest, ExistingIdenticalFileIsConfirmedOthersRefused) {
  fs::create_directories(out_ / "t");
  spit(out_ / "t/same", "identical");
  spit(out_ / "t/other", "differs!!");  // same size
  const auto before = fs::last_write_time(out_ / "t/same");
  const auto outcomes = send({{"t/same", "identical"}, {"t/other", "different"}});
  EXPECT_TRUE(outcomes[0].ok) << outcomes[0].error;
  EXPECT_TRUE(outcomes[0].already_present);
  expect_refused(outcomes[1], proto::RejectReason::Exists);
  EXPECT_EQ(slurp(out_ / "t/other"), "differs!!");
  EXPECT_EQ(fs::last_write_time(out_ / "t/same"), before);
}

TEST_F(PosixFileSinkTest, PartialFileLivesNextToItsFinalName) {
  PosixFileSink sink(out_.string(), false);
  ASSERT_TRUE(sink.make_directory("t/sub"));
  const auto id = sha256("id");
  ASSERT_TRUE(sink.open("t/sub/f.bin", id));
  const fs::path partial = out_ / "t/sub" / PosixFileSink::partial_name("f.bin", id);
  EXPECT_TRUE(fs::exists(partial));
  ASSERT_TRUE(sink.write("abc"));  // on the writer thread; commit() waits for it
  ASSERT_TRUE(sink.commit());
  EXPECT_FALSE(fs::exists(partial));
  EXPECT_EQ(slurp(out_ / "t/sub/f.bin"), "abc");
  EXPECT_EQ(listing(out_ / "t/sub"), (std::vector<std::string>{"f.bin"}));
  EXPECT_TRUE(sink.exists("t/sub/f.bin"));
  EXPECT_EQ(sink.existing_size("t/sub/f.bin"), std::optional<uint64_t>(3));
  EXPECT_FALSE(sink.exists("t/nope/f.bin"));
  EXPECT_FALSE(sink.existing_size("t/sub"));  // a directory is no file
}

TEST_F(PosixFileSinkTest, LongestNamesGetAPartialFileThatFitsNameMax) {
  // A 255-byte base name (the protocol's limit, and NAME_MAX) plus the partial
  // file's prefix and suffix would not fit; two such names that differ only at
  // the end must still not share a partial file.
  const std::string a = std::string(254, 'n') + "a";
  const std::string b = std::string(254, 'n') + "b";
  const auto id = sha256("id");
  EXPECT_LE(PosixFileSink::partial_name(a, id).size(), 255u);
  EXPECT_NE(PosixFileSink::partial_name(a, id), PosixFileSink::partial_name(b, id));
  EXPECT_EQ(PosixFileSink::partial_name("f.bin", id),
            ".f.bin." + to_hex(id).substr(0, 16) + ".part");
  const auto outcomes = send({{"d/" + a, "first"}, {"d/" + b, "second"}});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_TRUE(outcomes[0].ok) << outcomes[0].error;
  EXPECT_TRUE(outcomes[1].ok) << outcomes[1].error;
  EXPECT_EQ(slurp(out_ / "d" / a), "first");
  EXPECT_EQ(slurp(out_ / "d" / b), "second");
  EXPECT_EQ(listing(out_ / "d"), (std::vector<std::string>{a, b}));
}

// A write the kernel refuses (here EFBIG from RLIMIT_FSIZE, as ENOSPC would
// be on a full disk) happens on the writer thread after write() returned: it
// reaches the protocol at a later write() or at commit(), the receiver answers
// with a write error, the partial file holds only a prefix of the data and
// the final name never appears; once the limit is gone the same send resumes.
// Twice: at a block boundary (a direct write stops there), and 100 bytes past
// one (the direct write the kernel would shorten to an unaligned length is
// refused, and the rest of the file goes through the page cache).
TEST_F(PosixFileSinkTest, WriteFailureOnTheWriterThreadKeepsAPrefixAndResumes) {
  for (const rlim_t limit : {rlim_t{100 * 1024}, rlim_t{100 * 1024 + 100}}) {
    SCOPED_TRACE(limit);
    fs::remove_all(out_);
    fs::create_directories(out_);
    write_failure_keeps_a_prefix(limit);
  }
}

void PosixFileSinkTest::write_failure_keeps_a_prefix(rlim_t limit) {
  std::string data(600 * 1024, '\0');
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>(i * 7919 % 251);
  }
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = before;
  limited.rlim_cur = limit;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  proto::FileSender::Outcome failed;
  {
    // Not send(), whose checks are for sessions that close normally: a write
    // error found while data still arrives ends the session; one found only
    // at commit() (every chunk was queued before the worker failed) is
    // answered with RESULT and the session goes on. The sender sees a write
    // error either way.
    PosixFileSink sink(out_.string(), false);
    proto::FileReceiver receiver(sink, proto::ReceiverPolicy{});
    proto::FileSender sender;
    StringSource source(data);
    sender.offer(source, "big.bin", sha256("big.bin" + data), /*confirm_identical=*/true);
    pump(sender, receiver);
    failed = sender.outcome();
  }
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &before), 0);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.result, std::optional<proto::ResultStatus>(proto::ResultStatus::WriteError))
      << failed.error;
  EXPECT_FALSE(fs::exists(out_ / "big.bin"));
  const fs::path partial = out_ / PosixFileSink::partial_name("big.bin", sha256("big.bin" + data));
  ASSERT_TRUE(fs::exists(partial));
  const std::string held = slurp(partial);
  EXPECT_LE(held.size(), limit);
  EXPECT_EQ(held, data.substr(0, held.size()));

  const auto again = send({{"big.bin", data}});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_TRUE(again[0].ok) << again[0].error;
  EXPECT_EQ(again[0].resumed_from, held.size());
  EXPECT_EQ(slurp(out_ / "big.bin"), data);
}

// Whether `dir`'s file system takes O_DIRECT (ext4, xfs, btrfs, tmpfs since
// Linux 6.6 do); where it does not, the sink writes through the page cache.
bool direct_io_works(const fs::path& dir) {
  const fs::path probe = dir / "direct-probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return false;
  }
  void* block =
      std::aligned_alloc(PosixFileSink::kDirectAlignment, PosixFileSink::kDirectAlignment);
  std::memset(block, 0, PosixFileSink::kDirectAlignment);
  const bool wrote = ::write(fd, block, PosixFileSink::kDirectAlignment) ==
                     static_cast<ssize_t>(PosixFileSink::kDirectAlignment);
  std::free(block);
  ::close(fd);
  fs::remove(probe);
  return wrote;
}

std::string numbered(size_t n) {
  std::string data(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    data[i] = static_cast<char>(i * 131 % 253);
  }
  return data;
}

// Feeds `data` to an open sink in uneven pieces, as a stream would.
void write_in_pieces(PosixFileSink& sink, std::string_view data) {
  for (size_t at = 0, piece = 1; at < data.size(); at += piece, piece = piece * 3 % 70'001 + 1) {
    ASSERT_TRUE(sink.write(data.substr(at, piece)));
  }
}

// Whole blocks go around the page cache; the short tail goes through it; the
// file holds exactly the data, and reading it back (the resume path's
// hash_prefix) works after direct writes.
TEST_F(PosixFileSinkTest, WholeBlocksAreWrittenDirectAndTheTailBuffered) {
  const std::string data = numbered(3 * PosixFileSink::kWriteChunkBytes + 5000);
  const Sha256Digest id = sha256("direct");
  PosixFileSink sink(out_.string(), false);
  ASSERT_TRUE(sink.open("d.bin", id));
  write_in_pieces(sink, data);
  proto::InlineContentHash prefix;
  ASSERT_TRUE(sink.hash_prefix(data.size(), prefix));  // drains, then reads back
  EXPECT_EQ(prefix.finish(), sha256(data));
  ASSERT_TRUE(sink.commit());
  EXPECT_EQ(slurp(out_ / "d.bin"), data);
  EXPECT_EQ(sink.direct_bytes() + sink.buffered_bytes(), data.size());
  if (!direct_io_works(root_)) {
    GTEST_SKIP() << root_ << " has no O_DIRECT; the sink wrote through the page cache";
  }
  const uint64_t whole_blocks =
      data.size() / PosixFileSink::kDirectAlignment * PosixFileSink::kDirectAlignment;
  EXPECT_EQ(sink.direct_bytes(), whole_blocks);
  EXPECT_EQ(sink.buffered_bytes(), data.size() - whole_blocks);
}

// A partial file held from an earlier run ends off a block boundary: the
// rest of its first chunk goes through the page cache, everything from the
// next chunk boundary on around it, and the bytes line up.
TEST_F(PosixFileSinkTest, ResumeFromAnUnalignedOffsetRealignsAtTheNextChunk) {
  const std::string data = numbered(3 * PosixFileSink::kWriteChunkBytes + 17);
  const Sha256Digest id = sha256("resume");
  constexpr size_t kHeld = 5000;
  spit(out_ / PosixFileSink::partial_name("r.bin", id), data.substr(0, kHeld));
  PosixFileSink sink(out_.string(), false);
  const auto partial = sink.open("r.bin", id);
  ASSERT_TRUE(partial);
  ASSERT_EQ(partial->held, kHeld);
  write_in_pieces(sink, std::string_view(data).substr(kHeld));
  ASSERT_TRUE(sink.commit());
  EXPECT_EQ(slurp(out_ / "r.bin"), data);
  if (!direct_io_works(root_)) {
    GTEST_SKIP() << root_ << " has no O_DIRECT; the sink wrote through the page cache";
  }
  const uint64_t whole_blocks =
      data.size() / PosixFileSink::kDirectAlignment * PosixFileSink::kDirectAlignment;
  EXPECT_EQ(sink.direct_bytes(), whole_blocks - PosixFileSink::kWriteChunkBytes);
  EXPECT_EQ(sink.buffered_bytes(), data.size() - kHeld - sink.direct_bytes());
}

// --buffered: nothing goes around the page cache; the same bytes land.
TEST_F(PosixFileSinkTest, BufferedSinkNeverWritesDirect) {
  const std::string data = numbered(2 * PosixFileSink::kWriteChunkBytes + 1);
  PosixFileSink sink(out_.string(), false, /*direct_io=*/false);
  ASSERT_TRUE(sink.open("b.bin", sha256("buffered")));
  write_in_pieces(sink, data);
  ASSERT_TRUE(sink.commit());
  EXPECT_EQ(slurp(out_ / "b.bin"), data);
  EXPECT_EQ(sink.direct_bytes(), 0u);
  EXPECT_EQ(sink.buffered_bytes(), data.size());
}

}  // namespace
}  // namespace tinytcp::apps

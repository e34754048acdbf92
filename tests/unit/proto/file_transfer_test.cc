#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "proto/file_receiver.hh"
#include "proto/file_sender.hh"
#include "unit/proto/memory_files.hh"
#include "util/random.hh"

namespace tinytcp::proto {
namespace {

// Moves bytes between the two state machines in chunks of `chunk` bytes,
// optionally corrupting the byte at `corrupt_at` of the sender's stream, and
// stopping after `cut_after` sender bytes (a broken connection).
struct Pump {
  size_t chunk = 1000;
  std::optional<uint64_t> corrupt_at;
  std::optional<uint64_t> cut_after;
  uint64_t sent = 0;

  void run(FileSender& s, FileReceiver& r) {
    for (int rounds = 0; rounds < 1'000'000; ++rounds) {
      bool moved = false;
      auto out = s.output();
      if (!out.empty()) {
        size_t n = std::min(chunk, out.size());
        if (cut_after) {
          if (sent >= *cut_after) {
            return;
          }
          n = static_cast<size_t>(std::min<uint64_t>(n, *cut_after - sent));
        }
        std::string piece(out.substr(0, n));
        if (corrupt_at && *corrupt_at >= sent && *corrupt_at < sent + n) {
          piece[*corrupt_at - sent] ^= 0x01;
        }
        s.consume_output(n);
        sent += n;
        r.on_input(piece);
        moved = true;
      }
      const auto back = r.output();
      if (!back.empty()) {
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
};

class FileTransferTest : public ::testing::Test {
 protected:
  FileSender::Outcome send(const std::string& name, const std::string& data, Pump pump = {}) {
    MemorySource source(data);
    FileSender sender(sender_hash);
    FileReceiver receiver(sink, policy, receiver_hash);
    sender.offer(source, name, sha256(data));
    pump.run(sender, receiver);
    last_receiver_state = receiver.state();
    if (!receiver.files().empty()) {
      last_file = receiver.files().back();
    }
    return sender.outcome();
  }

  // A send of `data` as `name` cut after `cut_after` bytes: returns the
  // bytes the receiver's partial file holds (the only partial file).
  std::string interrupted_send(const std::string& name, const std::string& data,
                               uint64_t cut_after) {
    Pump cut;
    cut.cut_after = cut_after;
    EXPECT_FALSE(send(name, data, cut).ok);
    EXPECT_EQ(sink.partials.size(), 1u);
    return sink.partials.empty() ? std::string() : sink.partials.begin()->second;
  }

  MemorySink sink;
  ReceiverPolicy policy;
  ContentHash* sender_hash = nullptr;  // null: the state machines' own
  ContentHash* receiver_hash = nullptr;
  FileReceiver::State last_receiver_state{};
  FileReceiver::FileOutcome last_file;
};

TEST_F(FileTransferTest, TransfersAndVerifies) {
  const std::string data = Rng(1).bytes(1'000'000);
  const auto outcome = send("data.bin", data);
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(outcome.bytes_sent, data.size());
  EXPECT_EQ(sink.files["data.bin"], data);
  EXPECT_TRUE(sink.partials.empty());
  EXPECT_TRUE(last_file.ok);
}

TEST_F(FileTransferTest, EmptyFile) {
  const auto outcome = send("empty", "");
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(sink.files.count("empty"), 1u);
  EXPECT_EQ(sink.files["empty"], "");
}

TEST_F(FileTransferTest, ByteAtATimeStream) {
  const std::string data = Rng(2).bytes(3000);
  Pump pump;
  pump.chunk = 1;
  const auto outcome = send("slow", data, pump);
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(sink.files["slow"], data);
}

TEST_F(FileTransferTest, CorruptedByteIsAMismatchAndNothingIsKept) {
  const std::string data = Rng(3).bytes(100'000);
  Pump pump;
  pump.corrupt_at = 5000;  // inside the file bytes
  const auto outcome = send("bad", data, pump);
  EXPECT_FALSE(outcome.ok);
  ASSERT_TRUE(outcome.result.has_value());
  EXPECT_EQ(*outcome.result, ResultStatus::Mismatch);
  EXPECT_EQ(sink.files.count("bad"), 0u);
  EXPECT_TRUE(sink.partials.empty());
}

TEST_F(FileTransferTest, RefusesUnsafeNames) {
  const std::vector<std::string> names = {"../etc/passwd",
                                          "/abs",
                                          "a//b",
                                          "./a",
                                          "a/../b",
                                          "..",
                                          ".",
                                          "",
                                          "/",
                                          "dir//",
                                          std::string("a\0b", 3),
                                          "tab\there",
                                          "sub/tab\there",
                                          "back\\slash"};
  for (const auto& name : names) {
    const auto outcome = send(name, "x");
    EXPECT_FALSE(outcome.ok) << name;
    ASSERT_TRUE(outcome.rejected.has_value()) << name;
    EXPECT_EQ(*outcome.rejected, RejectReason::BadName) << name;
  }
  EXPECT_TRUE(sink.files.empty());
  EXPECT_TRUE(sink.partials.empty());
}

TEST_F(FileTransferTest, NeverOverwritesWithoutForce) {
  sink.files["keep"] = "original";
  const auto outcome = send("keep", "new content");
  ASSERT_TRUE(outcome.rejected.has_value());
  EXPECT_EQ(*outcome.rejected, RejectReason::Exists);
  EXPECT_EQ(sink.files["keep"], "original");
  policy.force = true;
  EXPECT_TRUE(send("keep", "new content").ok);
  EXPECT_EQ(sink.files["keep"], "new content");
}

TEST_F(FileTransferTest, RefusesOverMaxSizeAndOverFreeSpace) {
  policy.max_size = 10;
  auto outcome = send("big", std::string(11, 'x'));
  ASSERT_TRUE(outcome.rejected.has_value());
  EXPECT_EQ(*outcome.rejected, RejectReason::TooLarge);
  policy.max_size = UINT64_MAX;
  sink.free = 5;
  outcome = send("big", std::string(11, 'x'));
  ASSERT_TRUE(outcome.rejected.has_value());
  EXPECT_EQ(*outcome.rejected, RejectReason::NoSpace);
  EXPECT_TRUE(sink.files.empty());
  EXPECT_TRUE(sink.partials.empty());  // no empty partial file left behind
}

// A partial file whose bytes cannot be read back is started over from 0, and
// its old bytes do not stay in front of the new ones (the sink appends).
TEST_F(FileTransferTest, UnreadablePartialFileStartsOverEmpty) {
  const std::string data = Rng(11).bytes(300'000);
  ASSERT_GT(interrupted_send("bad.bin", data, 120'000).size(), 0u);
  sink.unreadable_prefix = true;
  const auto again = send("bad.bin", data);
  EXPECT_TRUE(again.ok) << again.error;
  EXPECT_EQ(again.resumed_from, 0u);
  EXPECT_EQ(sink.files["bad.bin"], data);
}

// A partial file longer than the file now offered (same name and id) is cut
// to the offered size, never committed with its extra bytes.
TEST_F(FileTransferTest, PartialFileLongerThanTheOfferIsCut) {
  const std::string data = Rng(12).bytes(50'000);
  sink.partials["long.bin." + to_hex(sha256(data))] = data + "trailing junk";
  const auto outcome = send("long.bin", data);
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(outcome.resumed_from, data.size());
  EXPECT_EQ(sink.files["long.bin"], data);
}

// Refused for space with bytes of an earlier run in the partial file: they
// stay for a resume once there is room.
TEST_F(FileTransferTest, RefusalForSpaceKeepsAPartialFileWithData) {
  const std::string data = Rng(9).bytes(400'000);
  const std::string held = interrupted_send("later.bin", data, 150'000);
  ASSERT_GT(held.size(), 0u);
  sink.free = 1000;
  const auto refused = send("later.bin", data);
  ASSERT_TRUE(refused.rejected.has_value());
  EXPECT_EQ(*refused.rejected, RejectReason::NoSpace);
  ASSERT_EQ(sink.partials.size(), 1u);
  EXPECT_EQ(sink.partials.begin()->second, held);
  sink.free = UINT64_MAX;
  const auto resumed = send("later.bin", data);
  EXPECT_TRUE(resumed.ok) << resumed.error;
  EXPECT_EQ(resumed.resumed_from, held.size());
  EXPECT_EQ(sink.files["later.bin"], data);
}

TEST_F(FileTransferTest, ResumesAfterInterruption) {
  const std::string data = Rng(4).bytes(500'000);
  Pump cut;
  cut.cut_after = 200'000;  // the connection breaks mid-file
  const auto first = send("resume.bin", data, cut);
  EXPECT_FALSE(first.ok);
  EXPECT_EQ(sink.files.count("resume.bin"), 0u);  // never the final name
  ASSERT_EQ(sink.partials.size(), 1u);
  const uint64_t held = sink.partials.begin()->second.size();
  EXPECT_GT(held, 100'000u);

  const auto second = send("resume.bin", data);
  EXPECT_TRUE(second.ok) << second.error;
  EXPECT_EQ(second.resumed_from, held);
  EXPECT_EQ(second.bytes_sent, data.size() - held);
  EXPECT_EQ(sink.files["resume.bin"], data);  // whole-file sha256 verified
  // The TRAILER's digest covers the whole file, the resumed prefix included.
  EXPECT_EQ(second.sha256, sha256(data));
  EXPECT_EQ(last_file.sha256, sha256(data));
}

// An app's ContentHash (say, on another thread) that outlives the sessions.
class CountingHash : public ContentHash {
 public:
  void update(std::string_view data) override {
    bytes += data.size();
    inner_.update(data);
  }
  Sha256Digest finish() override { return inner_.finish(); }
  Sha256Digest peek() override { return inner_.peek(); }
  uint64_t bytes = 0;

 private:
  InlineContentHash inner_;
};

TEST_F(FileTransferTest, InjectedHashesDoTheHashingAcrossAnInterruptedSession) {
  CountingHash s_hash;
  CountingHash r_hash;
  sender_hash = &s_hash;
  receiver_hash = &r_hash;
  const std::string data = Rng(12).bytes(400'000);
  Pump cut;
  cut.cut_after = 150'000;
  EXPECT_FALSE(send("inj.bin", data, cut).ok);
  // Both hashes now hold a cut-off file's state; the next session starts over.
  const uint64_t s_before = s_hash.bytes;
  const uint64_t r_before = r_hash.bytes;
  EXPECT_GT(s_before, 100'000u);
  EXPECT_GT(r_before, 100'000u);
  const auto second = send("inj.bin", data);
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_GT(second.resumed_from, 0u);
  EXPECT_EQ(second.sha256, sha256(data));
  EXPECT_EQ(last_file.sha256, sha256(data));
  // Each side hashed the whole file in the second session: the held prefix
  // (read back) and the rest (as it passed).
  EXPECT_EQ(s_hash.bytes - s_before, data.size());
  EXPECT_EQ(r_hash.bytes - r_before, data.size());
}

TEST_F(FileTransferTest, DigestIsComputedWhileSending) {
  const std::string data = Rng(8).bytes(700'000);
  const auto outcome = send("digest.bin", data);
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(outcome.sha256, sha256(data));
  EXPECT_EQ(last_file.sha256, sha256(data));
}

TEST_F(FileTransferTest, ChangedFileUnderTheSameIdIsCaughtByThePrefixHash) {
  // The id only picks the partial file: a file that changed but kept its id
  // (same size, same first and last 64 KiB) is still never spliced.
  const std::string original = Rng(9).bytes(300'000);
  Pump cut;
  cut.cut_after = 150'000;
  EXPECT_FALSE(send("same-id.bin", original, cut).ok);
  std::string changed = original;
  changed[1000] = static_cast<char>(changed[1000] ^ 0x5a);  // inside the held prefix
  MemorySource source(changed);
  FileSender sender;
  FileReceiver receiver(sink, policy);
  sender.offer(source, "same-id.bin", sha256(original));  // the old id
  Pump{}.run(sender, receiver);
  ASSERT_TRUE(sender.outcome().ok) << sender.outcome().error;
  EXPECT_EQ(sender.outcome().resumed_from, 0u);
  EXPECT_EQ(sink.files["same-id.bin"], changed);
}

TEST_F(FileTransferTest, ResumeWithForeignPrefixRestartsFromZero) {
  const std::string data = Rng(5).bytes(50'000);
  // A partial file for the same name and hash, but with wrong bytes in it.
  sink.partials["x." + to_hex(sha256(data))] = std::string(10'000, 'Z');
  const auto outcome = send("x", data);
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(outcome.resumed_from, 0u);
  EXPECT_EQ(sink.files["x"], data);
}

TEST_F(FileTransferTest, DiskFullKeepsPartialForResume) {
  const std::string data = Rng(6).bytes(100'000);
  sink.write_limit = 40'000;
  const auto outcome = send("full", data);
  EXPECT_FALSE(outcome.ok);
  ASSERT_TRUE(outcome.result.has_value());
  EXPECT_EQ(*outcome.result, ResultStatus::WriteError);
  EXPECT_EQ(last_receiver_state, FileReceiver::State::Failed);
  EXPECT_EQ(sink.files.count("full"), 0u);
  ASSERT_EQ(sink.partials.size(), 1u);
  EXPECT_EQ(sink.partials.begin()->second.size(), 40'000u);
  sink.write_limit.reset();
  const auto retry = send("full", data);
  EXPECT_TRUE(retry.ok) << retry.error;
  EXPECT_EQ(retry.resumed_from, 40'000u);
  EXPECT_EQ(sink.files["full"], data);
}

TEST_F(FileTransferTest, SourceReadErrorFailsTheSender) {
  MemorySource source(std::string(10'000, 'a'));
  source.fail_at_ = 0;
  FileSender sender;
  FileReceiver receiver(sink, policy);
  sender.offer(source, "f", sha256(std::string(10'000, 'a')));
  Pump{}.run(sender, receiver);
  EXPECT_EQ(sender.state(), FileSender::State::Failed);
  EXPECT_NE(sender.outcome().error.find("cannot read"), std::string::npos);
  EXPECT_EQ(sink.files.count("f"), 0u);
}

TEST_F(FileTransferTest, SeveralFilesThenBye) {
  FileSender sender;
  FileReceiver receiver(sink, policy);
  Pump pump;
  for (int i = 0; i < 3; ++i) {
    const std::string data = Rng(10 + static_cast<uint64_t>(i)).bytes(10'000);
    MemorySource source(data);
    sender.offer(source, "f" + std::to_string(i), sha256(data));
    pump.run(sender, receiver);
    ASSERT_TRUE(sender.outcome().ok) << sender.outcome().error;
    EXPECT_EQ(sink.files["f" + std::to_string(i)], data);
  }
  sender.finish_stream();
  pump.run(sender, receiver);
  EXPECT_EQ(receiver.state(), FileReceiver::State::Closed);
  EXPECT_EQ(receiver.files().size(), 3u);
}

TEST_F(FileTransferTest, GarbageFromThePeerFailsCleanly) {
  FileReceiver receiver(sink, policy);
  receiver.on_input("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(receiver.state(), FileReceiver::State::Failed);
  EXPECT_TRUE(sink.files.empty());
  EXPECT_TRUE(sink.partials.empty());
  receiver.on_input("more garbage");  // ignored, never buffered
  EXPECT_EQ(receiver.state(), FileReceiver::State::Failed);
}

// --- Directory trees (version 3) ---

struct TreeFile {
  std::string path;
  std::string data;
};

class TreeTransferTest : public FileTransferTest {
 protected:
  // Sends directory entries and files in one session; returns each outcome.
  std::vector<FileSender::Outcome> send_tree(const std::vector<std::string>& directories,
                                             const std::vector<TreeFile>& tree, Pump pump = {}) {
    FileSender sender;
    FileReceiver receiver(sink, policy);
    std::vector<FileSender::Outcome> out;
    for (const auto& dir : directories) {
      sender.offer_directory(dir);
      pump.run(sender, receiver);
      out.push_back(sender.outcome());
    }
    for (const auto& f : tree) {
      if (sender.state() != FileSender::State::Idle) {
        break;
      }
      MemorySource source(f.data);
      sender.offer(source, f.path, sha256(f.data), /*confirm_identical=*/true);
      pump.run(sender, receiver);
      out.push_back(sender.outcome());
    }
    if (sender.state() == FileSender::State::Idle) {
      sender.finish_stream();
      pump.run(sender, receiver);
    }
    receiver_files = receiver.files();
    last_receiver_state = receiver.state();
    return out;
  }

  std::vector<FileReceiver::FileOutcome> receiver_files;
};

TEST_F(TreeTransferTest, DirectoriesAndFilesInOneSession) {
  const std::vector<TreeFile> tree = {
      {"t/a.txt", Rng(20).bytes(5000)},
      {"t/sub/with space.bin", Rng(21).bytes(70'000)},
      {"t/sub/deeper/r\xc3\xa9sum\xc3\xa9 \xe2\x98\x83.txt", "unicode"},
      {"t/zero", ""},
  };
  const auto outcomes = send_tree({"t/", "t/empty/", "t/empty/nested/", "t/sub/"}, tree);
  ASSERT_EQ(outcomes.size(), 8u);
  for (const auto& o : outcomes) {
    EXPECT_TRUE(o.ok) << o.error;
  }
  for (const auto& f : tree) {
    EXPECT_EQ(sink.files[f.path], f.data) << f.path;
  }
  EXPECT_EQ(sink.dirs,
            (std::set<std::string>{"t", "t/empty", "t/empty/nested", "t/sub", "t/sub/deeper"}));
  EXPECT_TRUE(sink.partials.empty());
  EXPECT_EQ(last_receiver_state, FileReceiver::State::Closed);
  ASSERT_EQ(receiver_files.size(), 8u);
  EXPECT_TRUE(receiver_files[0].directory);
  EXPECT_FALSE(receiver_files[4].directory);
}

TEST_F(TreeTransferTest, IdenticalFileInPlaceIsConfirmedWithoutSendingIt) {
  const std::string data = Rng(22).bytes(40'000);
  sink.files["t/a"] = data;
  const auto outcomes = send_tree({}, {{"t/a", data}, {"t/b", "bee"}});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_TRUE(outcomes[0].ok) << outcomes[0].error;
  EXPECT_TRUE(outcomes[0].already_present);
  EXPECT_EQ(outcomes[0].bytes_sent, 0u);
  EXPECT_EQ(outcomes[0].sha256, sha256(data));
  EXPECT_TRUE(outcomes[1].ok);
  EXPECT_EQ(sink.files["t/a"], data);
  EXPECT_TRUE(receiver_files[0].ok);
  EXPECT_TRUE(receiver_files[0].already_present);
  EXPECT_EQ(receiver_files[0].bytes_received, 0u);
}

TEST_F(TreeTransferTest, DifferentFileOfTheSameSizeIsRefusedAndTheSessionGoesOn) {
  sink.files["t/a"] = std::string(100, 'o');
  const auto outcomes = send_tree({}, {{"t/a", std::string(100, 'n')}, {"t/b", "bee"}});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_FALSE(outcomes[0].ok);
  ASSERT_TRUE(outcomes[0].rejected.has_value());
  EXPECT_EQ(*outcomes[0].rejected, RejectReason::Exists);
  EXPECT_EQ(sink.files["t/a"], std::string(100, 'o'));  // untouched
  EXPECT_TRUE(outcomes[1].ok) << outcomes[1].error;
  EXPECT_EQ(sink.files["t/b"], "bee");
  EXPECT_FALSE(receiver_files[0].ok);
  EXPECT_NE(receiver_files[0].error.find("file exists"), std::string::npos);
}

TEST_F(TreeTransferTest, ForceReplacesInsteadOfConfirming) {
  sink.files["t/a"] = std::string(100, 'o');
  policy.force = true;
  const auto outcomes = send_tree({}, {{"t/a", std::string(100, 'n')}});
  ASSERT_TRUE(outcomes[0].ok) << outcomes[0].error;
  EXPECT_FALSE(outcomes[0].already_present);
  EXPECT_EQ(sink.files["t/a"], std::string(100, 'n'));
  EXPECT_EQ(sink.hashed_existing, 0);
}

TEST_F(TreeTransferTest, SingleFileSendStillRefusesAnIdenticalFile) {
  // Without confirm_identical (file-send FILE) an existing file is refused
  // as in version 2, even when it is the same file.
  sink.files["same"] = "content";
  const auto outcome = send("same", "content");
  EXPECT_FALSE(outcome.ok);
  ASSERT_TRUE(outcome.rejected.has_value());
  EXPECT_EQ(*outcome.rejected, RejectReason::Exists);
  EXPECT_EQ(sink.files["same"], "content");
  EXPECT_FALSE(last_file.ok);
  EXPECT_NE(last_file.error.find("file exists"), std::string::npos);
}

TEST_F(TreeTransferTest, MismatchLosesOneFileNotTheSession) {
  Pump pump;
  pump.corrupt_at = 2000;  // inside the first file's bytes
  const auto outcomes = send_tree({}, {{"t/bad", Rng(23).bytes(10'000)}, {"t/good", "fine"}}, pump);
  ASSERT_EQ(outcomes.size(), 2u);
  ASSERT_TRUE(outcomes[0].result.has_value());
  EXPECT_EQ(*outcomes[0].result, ResultStatus::Mismatch);
  EXPECT_EQ(sink.files.count("t/bad"), 0u);
  EXPECT_TRUE(outcomes[1].ok) << outcomes[1].error;
  EXPECT_EQ(sink.files["t/good"], "fine");
  EXPECT_EQ(last_receiver_state, FileReceiver::State::Closed);
}

TEST_F(TreeTransferTest, FileInTheWayOfADirectoryIsRefused) {
  sink.files["t/x"] = "a file";
  const auto outcomes = send_tree({"t/x/"}, {{"t/x/inner", "data"}, {"t/y", "ok"}});
  ASSERT_EQ(outcomes.size(), 3u);
  for (int i : {0, 1}) {
    ASSERT_TRUE(outcomes[static_cast<size_t>(i)].rejected.has_value()) << i;
    EXPECT_EQ(*outcomes[static_cast<size_t>(i)].rejected, RejectReason::BadDirectory) << i;
  }
  EXPECT_TRUE(outcomes[2].ok);
  EXPECT_EQ(sink.files["t/x"], "a file");
}

TEST_F(TreeTransferTest, ResumesATreeAfterACut) {
  const std::vector<TreeFile> tree = {{"t/one", Rng(24).bytes(50'000)},
                                      {"t/two", Rng(25).bytes(300'000)},
                                      {"t/three", Rng(26).bytes(20'000)}};
  Pump cut;
  cut.cut_after = 200'000;  // inside "t/two"
  const auto first = send_tree({"t/"}, tree, cut);
  EXPECT_TRUE(first[1].ok);
  EXPECT_EQ(sink.files.count("t/two"), 0u);
  ASSERT_EQ(sink.partials.size(), 1u);
  const uint64_t held = sink.partials.begin()->second.size();
  EXPECT_GT(held, 0u);

  const auto second = send_tree({"t/"}, tree);
  ASSERT_EQ(second.size(), 4u);
  EXPECT_TRUE(second[1].ok && second[1].already_present) << second[1].error;
  EXPECT_TRUE(second[2].ok) << second[2].error;
  EXPECT_EQ(second[2].resumed_from, held);
  EXPECT_EQ(second[2].sha256, sha256(tree[1].data));  // the whole file, prefix included
  EXPECT_TRUE(second[3].ok);
  for (const auto& f : tree) {
    EXPECT_EQ(sink.files[f.path], f.data) << f.path;
  }
  EXPECT_TRUE(sink.partials.empty());
}

// Feeds one raw frame to a fresh receiver; returns what it answered.
Expected<Message, FrameError> answer_to(FileSink& sink, const Message& m) {
  FileReceiver receiver(sink, ReceiverPolicy{});
  std::string frame;
  encode(m, frame);
  receiver.on_input(frame);
  FrameDecoder decoder;
  decoder.feed(receiver.output());
  auto got = decoder.take();
  if (!got) {
    return make_unexpected(FrameError::Truncated);
  }
  return *got;
}

TEST_F(TreeTransferTest, OldVersionPeerGetsAClearRefusal) {
  Offer old;
  old.version = 2;
  old.name = "file";
  const auto answer = answer_to(sink, old);
  ASSERT_TRUE(answer);
  const auto* reject = std::get_if<Reject>(&*answer);
  ASSERT_NE(reject, nullptr);
  EXPECT_EQ(reject->reason, RejectReason::BadVersion);
  EXPECT_EQ(reject->message, "version 2 (we speak 3)");
}

TEST_F(TreeTransferTest, DirectoryEntryWithASizeIsRefused) {
  Offer dir;
  dir.name = "d/";
  dir.size = 5;
  const auto answer = answer_to(sink, dir);
  ASSERT_TRUE(answer);
  const auto* reject = std::get_if<Reject>(&*answer);
  ASSERT_NE(reject, nullptr);
  EXPECT_EQ(reject->reason, RejectReason::BadName);
  EXPECT_TRUE(sink.dirs.empty());
}

TEST_F(TreeTransferTest, DeclineOutsideAnOfferIsAProtocolError) {
  FileReceiver receiver(sink, policy);
  std::string frame;
  encode(Decline{}, frame);
  receiver.on_input(frame);
  EXPECT_EQ(receiver.state(), FileReceiver::State::Failed);
}

TEST_F(TreeTransferTest, SenderRefusesToOverwriteWhenTheReceiverOffersAnotherSize) {
  // A receiver that claims an existing file of another size is broken: the
  // sender fails instead of sending anything.
  MemorySource source("12345");
  FileSender sender;
  sender.offer(source, "f", sha256("12345"), true);
  sender.consume_output(sender.output().size());
  Accept accept;
  accept.existing = true;
  accept.resume_offset = 3;
  std::string frame;
  encode(accept, frame);
  sender.on_input(frame);
  EXPECT_EQ(sender.state(), FileSender::State::Failed);
}

}  // namespace
}  // namespace tinytcp::proto

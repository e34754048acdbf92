#include "io/uring_writer.hh"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "io/kernel_device.hh"
#include "io/tun_device.hh"

namespace tinytcp::io {
namespace {

// A non-blocking pipe: what goes in comes out in order, and a full one says
// EAGAIN, as a full device queue would.
class Pipe {
 public:
  Pipe() {
    if (::pipe2(fds_, O_NONBLOCK | O_CLOEXEC) != 0) {
      throw std::system_error(errno, std::generic_category(), "pipe2");
    }
  }
  ~Pipe() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int reader() const { return fds_[0]; }
  int writer() const { return fds_[1]; }
  std::string drain() const {
    std::string out;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::read(fds_[0], buffer, sizeof buffer)) > 0) {
      out.append(buffer, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fds_[2] = {-1, -1};
};

std::unique_ptr<UringWriter> make_writer(int fd) {
  std::string why;
  auto writer = UringWriter::create(fd, &why);
  if (!writer) {
    EXPECT_FALSE(why.empty());
  }
  return writer;
}

TEST(UringWriterTest, WritesABatchInOrderWithOneEnter) {
  Pipe pipe;
  auto writer = make_writer(pipe.writer());
  if (!writer) {
    GTEST_SKIP() << "no io_uring here";
  }
  const std::string_view packets[] = {"first ", "second ", "third"};
  std::vector<std::pair<size_t, int>> results;
  EXPECT_EQ(writer->write(packets, 3, [&](size_t i, int r) { results.emplace_back(i, r); }), 3u);
  EXPECT_EQ(pipe.drain(), "first second third");
  EXPECT_EQ(results, (std::vector<std::pair<size_t, int>>{{0, 6}, {1, 7}, {2, 5}}));
  EXPECT_EQ(writer->enters(), 1u);
  EXPECT_FALSE(writer->broken());
}

TEST(UringWriterTest, ABatchLargerThanTheRingTakesOneEnterPerChunk) {
  Pipe pipe;
  auto writer = make_writer(pipe.writer());
  if (!writer) {
    GTEST_SKIP() << "no io_uring here";
  }
  std::vector<std::string> texts;
  std::string expected;
  for (int i = 0; i < 150; ++i) {
    texts.push_back(std::to_string(i) + ",");
    expected += texts.back();
  }
  const std::vector<std::string_view> packets(texts.begin(), texts.end());
  size_t next = 0;
  EXPECT_EQ(writer->write(packets.data(), packets.size(),
                          [&](size_t i, int r) {
                            EXPECT_EQ(i, next++);
                            EXPECT_EQ(r, static_cast<int>(texts[i].size()));
                          }),
            150u);
  EXPECT_EQ(next, 150u);
  EXPECT_EQ(pipe.drain(), expected);
  EXPECT_EQ(writer->enters(), 3u);  // 64 + 64 + 22
}

TEST(UringWriterTest, AFullDescriptorIsEagainNotAWait) {
  Pipe pipe;
  ASSERT_GE(::fcntl(pipe.writer(), F_SETPIPE_SZ, 4096), 4096);
  auto writer = make_writer(pipe.writer());
  if (!writer) {
    GTEST_SKIP() << "no io_uring here";
  }
  const std::string block(1000, 'x');
  const std::vector<std::string_view> packets(10, block);
  std::vector<int> results;
  writer->write(packets.data(), packets.size(), [&](size_t, int r) { results.push_back(r); });
  ASSERT_EQ(results.size(), 10u);
  EXPECT_EQ(results.front(), 1000);
  EXPECT_EQ(results.back(), -EAGAIN);
  EXPECT_FALSE(writer->broken());
}

TEST(UringWriterTest, KernelDeviceCountsEveryWriteOfABatch) {
  // A TUN device the kernel names, never up: every write fails and is
  // counted per packet through the io_uring path. Needs CAP_NET_ADMIN.
  KernelDeviceConfig config{""};
  config.txqueuelen = 0;
  config.uring = true;
  std::unique_ptr<TunDevice> tun;
  try {
    tun = std::make_unique<TunDevice>(config);
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no TUN device here: " << e.what();
  }
  if (!tun->uring()) {
    GTEST_SKIP() << "no io_uring here";
  }
  const std::string small(60, '\0');
  const std::string too_big(tun->mtu() + 1, '\0');
  const std::string_view packets[] = {small, small, too_big, small, small, small};
  tun->send_batch(packets, 6);
  EXPECT_EQ(tun->stats().packets_sent, 0u);
  EXPECT_EQ(tun->stats().send_drops, 6u);
  EXPECT_EQ(tun->drops()[DeviceDrop::kTooBig], 1u);
  // Zeros are no IP packet: the kernel says EINVAL (or EIO for the device
  // being down first); either way each packet is counted once.
  EXPECT_EQ(tun->drops()[DeviceDrop::kRejected] + tun->drops()[DeviceDrop::kDeviceDown], 5u);
  EXPECT_EQ(tun->uring_enters(), 2u);  // two before the oversized one, three after
}

TEST(UringWriterTest, OffloadDevicesDoNotUseIt) {
  KernelDeviceConfig config{""};
  config.txqueuelen = 0;
  config.uring = true;
  config.offload = true;
  std::unique_ptr<TunDevice> tun;
  try {
    tun = std::make_unique<TunDevice>(config);
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no TUN device with offload here: " << e.what();
  }
  EXPECT_FALSE(tun->uring());
}

}  // namespace
}  // namespace tinytcp::io

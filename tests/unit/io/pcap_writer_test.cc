#include "io/pcap_writer.hh"

#include <pcap/pcap.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>

#include "io/pcap_capture.hh"
#include "io/system_clock.hh"
#include "unit/io/fake_adapter.hh"

using namespace std::chrono_literals;

namespace tinytcp::io {
namespace {

struct Record {
  int64_t sec;
  int64_t nsec;
  uint32_t caplen;
  uint32_t len;
  std::string bytes;
};

struct PcapFile {
  int linktype = -1;
  int snaplen = -1;
  std::vector<Record> records;
};

// Reads a capture back with libpcap itself.
PcapFile read_back(const std::string& path) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, decltype(&pcap_close)> p(
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf),
      &pcap_close);
  PcapFile file;
  EXPECT_NE(p, nullptr) << errbuf;
  if (!p) {
    return file;
  }
  file.linktype = pcap_datalink(p.get());
  file.snaplen = pcap_snapshot(p.get());
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  int rc = 0;
  while ((rc = pcap_next_ex(p.get(), &header, &data)) == 1) {
    file.records.push_back(
        Record{header->ts.tv_sec, header->ts.tv_usec, header->caplen, header->len,
               std::string(reinterpret_cast<const char*>(data), header->caplen)});
  }
  EXPECT_EQ(rc, PCAP_ERROR_BREAK) << pcap_geterr(p.get());  // clean end of file
  return file;
}

class PcapWriterTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) {
    return ::testing::TempDir() + "tinytcp_" + std::to_string(::getpid()) + "_" + name;
  }
  void TearDown() override {
    for (const auto& p : made_) {
      ::unlink(p.c_str());
    }
  }
  std::string make_path(const std::string& name) {
    made_.push_back(path(name));
    return made_.back();
  }
  std::vector<std::string> made_;
};

TEST_F(PcapWriterTest, RecordsReadBackFieldByField) {
  const auto file = make_path("raw.pcap");
  {
    PcapWriter w(file, LinkType::kRawIp);
    w.write(std::string("\x45\x00\x00\x14", 4), 1700000000s + 123456789ns);
    w.write("second", 1700000001s + 5ns);
    EXPECT_EQ(w.packets_written(), 2u);
  }
  const PcapFile got = read_back(file);
  EXPECT_EQ(got.linktype, DLT_RAW);  // libpcap maps LINKTYPE_RAW (101) to DLT_RAW
  EXPECT_EQ(got.snaplen, static_cast<int>(PcapWriter::kDefaultSnaplen));
  ASSERT_EQ(got.records.size(), 2u);
  EXPECT_EQ(got.records[0].sec, 1700000000);
  EXPECT_EQ(got.records[0].nsec, 123456789);
  EXPECT_EQ(got.records[0].caplen, 4u);
  EXPECT_EQ(got.records[0].len, 4u);
  EXPECT_EQ(got.records[0].bytes, std::string("\x45\x00\x00\x14", 4));
  EXPECT_EQ(got.records[1].sec, 1700000001);
  EXPECT_EQ(got.records[1].nsec, 5);
  EXPECT_EQ(got.records[1].bytes, "second");
}

TEST_F(PcapWriterTest, FileHeaderIsNanosecondPcapWithLinkType) {
  const auto file = make_path("eth.pcap");
  { PcapWriter w(file, LinkType::kEthernet, 1500); }
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 24u);  // the global header and nothing else
  uint32_t magic = 0;
  std::memcpy(&magic, bytes.data(), 4);
  EXPECT_EQ(magic, 0xa1b23c4du);  // nanosecond pcap, host byte order
  uint32_t snaplen = 0;
  uint32_t linktype = 0;
  std::memcpy(&snaplen, bytes.data() + 16, 4);
  std::memcpy(&linktype, bytes.data() + 20, 4);
  EXPECT_EQ(snaplen, 1500u);
  EXPECT_EQ(linktype, 1u);  // LINKTYPE_ETHERNET
  EXPECT_EQ(read_back(file).linktype, DLT_EN10MB);
}

TEST_F(PcapWriterTest, RawLinkTypeOnDiskIs101) {
  const auto file = make_path("raw101.pcap");
  { PcapWriter w(file, LinkType::kRawIp); }
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 24u);
  uint32_t linktype = 0;
  std::memcpy(&linktype, bytes.data() + 20, 4);
  EXPECT_EQ(linktype, 101u);
}

TEST_F(PcapWriterTest, LongPacketStoredTruncatedWithOriginalLength) {
  const auto file = make_path("trunc.pcap");
  const std::string big(3000, 'z');
  {
    PcapWriter w(file, LinkType::kRawIp, 1000);
    w.write(big, 1s);
    EXPECT_EQ(w.packets_truncated(), 1u);
  }
  const PcapFile got = read_back(file);
  ASSERT_EQ(got.records.size(), 1u);
  EXPECT_EQ(got.records[0].caplen, 1000u);
  EXPECT_EQ(got.records[0].len, 3000u);
  EXPECT_EQ(got.records[0].bytes, big.substr(0, 1000));
}

TEST_F(PcapWriterTest, EmptyPacketIsARecord) {
  const auto file = make_path("empty.pcap");
  {
    PcapWriter w(file, LinkType::kRawIp);
    w.write("", 2s);
  }
  const PcapFile got = read_back(file);
  ASSERT_EQ(got.records.size(), 1u);
  EXPECT_EQ(got.records[0].len, 0u);
}

TEST_F(PcapWriterTest, FlushMakesRecordsVisibleWhileOpen) {
  const auto file = make_path("flush.pcap");
  PcapWriter w(file, LinkType::kRawIp);
  w.write("abc", 3s);
  w.flush();
  EXPECT_EQ(read_back(file).records.size(), 1u);
}

TEST_F(PcapWriterTest, WallClockTimestampIsNow) {
  const auto file = make_path("now.pcap");
  const auto before = std::chrono::duration_cast<std::chrono::seconds>(wall_clock_now()).count();
  {
    PcapWriter w(file, LinkType::kRawIp);
    w.write("x");
  }
  const auto after = std::chrono::duration_cast<std::chrono::seconds>(wall_clock_now()).count();
  const PcapFile got = read_back(file);
  ASSERT_EQ(got.records.size(), 1u);
  EXPECT_GE(got.records[0].sec, before);
  EXPECT_LE(got.records[0].sec, after);
}

TEST_F(PcapWriterTest, UnwritablePathThrowsNamingIt) {
  const std::string bad = "/nonexistent-dir-tinytcp/x.pcap";
  try {
    PcapWriter w(bad, LinkType::kRawIp);
    FAIL() << "no exception";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    EXPECT_EQ(e.code().value(), ENOENT);
  }
}

TEST_F(PcapWriterTest, CaptureRecordsBothDirectionsInOrder) {
  const auto file = make_path("capture.pcap");
  testing::FakeAdapter link(LinkType::kEthernet);
  std::vector<std::string> up;
  {
    PcapCapture capture(link, file);
    EXPECT_EQ(capture.link_type(), LinkType::kEthernet);
    link.deliver("in-1");
    capture.receive_batch([&](std::string_view p) { up.emplace_back(p); });
    capture.send("out-1");
    const std::string_view batch[] = {"out-2", "out-3"};
    capture.send_batch(batch, 2);
  }
  EXPECT_EQ(up, (std::vector<std::string>{"in-1"}));
  EXPECT_EQ(link.sent, (std::vector<std::string>{"out-1", "out-2", "out-3"}));
  const PcapFile got = read_back(file);
  EXPECT_EQ(got.linktype, DLT_EN10MB);
  ASSERT_EQ(got.records.size(), 4u);
  EXPECT_EQ(got.records[0].bytes, "in-1");
  EXPECT_EQ(got.records[1].bytes, "out-1");
  EXPECT_EQ(got.records[3].bytes, "out-3");
}

TEST_F(PcapWriterTest, CapturePassesTheSendFailureHandlerToTheDevice) {
  const auto file = make_path("refused.pcap");
  testing::FakeAdapter link;
  PcapCapture capture(link, file);
  std::vector<std::string> refused;
  capture.set_send_failure_handler([&](std::string_view p) { refused.emplace_back(p); });
  link.refuse = true;
  capture.send("out");
  EXPECT_EQ(refused, (std::vector<std::string>{"out"}));
}

}  // namespace
}  // namespace tinytcp::io

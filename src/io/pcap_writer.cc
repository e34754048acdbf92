#include "io/pcap_writer.hh"

#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>

#include "io/file_descriptor.hh"
#include "io/system_clock.hh"

namespace tinytcp::io {
namespace {

// libpcap takes DLT_ values and writes the matching LINKTYPE_ to the file.
int dlt_for(LinkType type) {
  switch (type) {
    case LinkType::kEthernet:
      return DLT_EN10MB;
    case LinkType::kRawIp:
      return DLT_RAW;
  }
  return DLT_RAW;
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path, LinkType type, size_t snaplen)
    : path_(path), type_(type), snaplen_(snaplen) {
  handle_ = ::pcap_open_dead_with_tstamp_precision(dlt_for(type), static_cast<int>(snaplen),
                                                   PCAP_TSTAMP_PRECISION_NANO);
  if (handle_ == nullptr) {
    throw_errno(ENOMEM, "pcap_open_dead for " + path);
  }
  errno = 0;
  dumper_ = ::pcap_dump_open(handle_, path.c_str());
  if (dumper_ == nullptr) {
    const int error = errno != 0 ? errno : EIO;
    const std::string reason = ::pcap_geterr(handle_);
    ::pcap_close(handle_);
    throw_errno(error, "open pcap file " + path + " (" + reason + ")");
  }
}

PcapWriter::~PcapWriter() {
  ::pcap_dump_close(dumper_);
  ::pcap_close(handle_);
}

void PcapWriter::write(std::string_view packet, Duration since_unix_epoch) {
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_unix_epoch);
  pcap_pkthdr header{};
  header.ts.tv_sec = static_cast<time_t>(secs.count());
  // With nanosecond precision, libpcap stores tv_usec as nanoseconds.
  header.ts.tv_usec = static_cast<suseconds_t>((since_unix_epoch - secs).count());
  header.len = static_cast<bpf_u_int32>(packet.size());
  header.caplen = static_cast<bpf_u_int32>(std::min(packet.size(), snaplen_));
  if (header.caplen < header.len) {
    ++truncated_;
  }
  // libpcap's API takes bytes as u_char; the cast only changes signedness.
  ::pcap_dump(reinterpret_cast<u_char*>(dumper_), &header,
              reinterpret_cast<const u_char*>(packet.data()));
  ++packets_;
}

void PcapWriter::write(std::string_view packet) {
  write(packet, wall_clock_now());
}

void PcapWriter::flush() {
  static_cast<void>(::pcap_dump_flush(dumper_));
}

}  // namespace tinytcp::io

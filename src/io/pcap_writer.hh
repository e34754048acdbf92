#pragma once

// Writes packets to a pcap file through libpcap, so tcpdump, tshark and
// Wireshark read it as their own. The file has nanosecond timestamps and the
// link type of the adapter (LINKTYPE_RAW for TUN and the UDP tunnel,
// LINKTYPE_ETHERNET for TAP). Packets longer than the snapshot length are
// stored truncated with their original length, as tcpdump -s does.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/adapter.hh"
#include "util/time.hh"

struct pcap;
struct pcap_dumper;

namespace tinytcp::io {

class PcapWriter {
 public:
  static constexpr size_t kDefaultSnaplen = 262144;

  // Creates (truncates) `path`; throws std::system_error naming the file when
  // it cannot.
  PcapWriter(const std::string& path, LinkType type, size_t snaplen = kDefaultSnaplen);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Appends one packet stamped `since_unix_epoch` (wall-clock time).
  void write(std::string_view packet, Duration since_unix_epoch);
  // Appends one packet stamped with the current wall-clock time.
  void write(std::string_view packet);
  // Pushes buffered records to the file (the destructor does it too).
  void flush();

  LinkType link_type() const { return type_; }
  size_t snaplen() const { return snaplen_; }
  uint64_t packets_written() const { return packets_; }
  uint64_t packets_truncated() const { return truncated_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  LinkType type_;
  size_t snaplen_;
  pcap* handle_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  uint64_t packets_ = 0;
  uint64_t truncated_ = 0;
};

}  // namespace tinytcp::io

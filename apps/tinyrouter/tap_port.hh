#pragma once

// TapPort: one interface of tinyrouter on the outside: a TAP device (whole
// Ethernet frames), optionally a pcap capture of what crossed it and an
// impairment stage above that (so the capture shows what really crossed the
// link), and the FrameSink the interface's NetworkInterface sends through.
//
// The impairment acts on what the router sends out of the device, IPv4 only,
// as a router drops on its output queue: ARP goes around it. (Impaired ARP
// made a lossy link unusable for seconds at a time: a lost request or reply
// is asked again only after ArpCache's request interval, 5 s.) Frames that
// arrive are never impaired; impair the other interface for the other
// direction.
//
// Offloads (on unless turned off): the device is opened with IFF_VNET_HDR and
// checksum, TSO4 and TSO6 offload, so the kernel hands over TCP super-frames
// of up to 64 KiB with their virtio-net header, which the Router forwards
// with it (net/link_offload.hh). Without kernel support, or with a capture or
// an impairment stage (which see plain frames), the port runs without.

#include <memory>
#include <optional>
#include <string>

#include "io/adapter.hh"
#include "io/impairment.hh"
#include "io/tap_device.hh"
#include "net/frame_sink.hh"
#include "net/link_offload.hh"

namespace tinytcp::apps {

class TapPort : public net::FrameSink {
 public:
  // Throws std::runtime_error (one line) when the device or the capture file
  // cannot be opened.
  TapPort(const std::string& name, const std::optional<io::ImpairmentConfig>& impairment,
          const std::string& pcap, uint64_t seed, bool offload = true);
  ~TapPort() override;
  TapPort(const TapPort&) = delete;
  TapPort& operator=(const TapPort&) = delete;

  void send_frame(std::string_view frame) override;
  void send_offloaded_frame(std::string_view frame, const net::LinkOffload& offload) override;
  // With offload: a read's header and frame; false (counted) for a read
  // shorter than the header. Without: the read is the frame.
  bool unwrap(std::string_view read, std::string_view& frame, net::LinkOffload& offload);
  bool offload() const { return device_->offload(); }
  uint64_t bad_reads() const { return bad_reads_; }
  // What the loop reads from.
  io::DatagramAdapter& adapter() { return *top_; }
  const io::TapDevice& device() const { return *device_; }
  const std::string& name() const { return name_; }
  // Frames the impairment stage dropped (0 without one).
  uint64_t impaired_out() const;

 private:
  std::string name_;
  std::unique_ptr<io::TapDevice> device_;
  std::unique_ptr<io::DatagramAdapter> capture_;
  std::unique_ptr<io::DatagramAdapter> impaired_;
  io::DatagramAdapter* below_ = nullptr;  // under the impairment: ARP goes here
  io::DatagramAdapter* top_ = nullptr;
  uint64_t bad_reads_ = 0;
};

}  // namespace tinytcp::apps

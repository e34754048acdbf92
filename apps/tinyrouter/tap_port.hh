#pragma once

// TapPort: one interface of tinyrouter on the outside: a TAP device (whole
// Ethernet frames), optionally a pcap capture of what crossed it and an
// impairment stage above that (so the capture shows what really crossed the
// link), and the FrameSink the interface's NetworkInterface sends through.

#include <memory>
#include <optional>
#include <string>

#include "io/adapter.hh"
#include "io/impairment.hh"
#include "io/tap_device.hh"
#include "net/frame_sink.hh"

namespace tinytcp::apps {

class TapPort : public net::FrameSink {
 public:
  // Throws std::runtime_error (one line) when the device or the capture file
  // cannot be opened.
  TapPort(const std::string& name, const std::optional<io::ImpairmentConfig>& impairment,
          const std::string& pcap, uint64_t seed);
  ~TapPort() override;
  TapPort(const TapPort&) = delete;
  TapPort& operator=(const TapPort&) = delete;

  void send_frame(std::string_view frame) override { top_->send(frame); }
  // What the loop reads from.
  io::DatagramAdapter& adapter() { return *top_; }
  const io::TapDevice& device() const { return *device_; }
  const std::string& name() const { return name_; }
  // Frames the impairment stage dropped, each direction (0 without one).
  uint64_t impaired_out() const;
  uint64_t impaired_in() const;

 private:
  std::string name_;
  std::unique_ptr<io::TapDevice> device_;
  std::unique_ptr<io::DatagramAdapter> capture_;
  std::unique_ptr<io::DatagramAdapter> impaired_;
  io::DatagramAdapter* top_ = nullptr;
};

}  // namespace tinytcp::apps

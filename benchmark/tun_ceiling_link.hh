#pragma once

// One TCP connection's packets on a plain TUN device (IFF_TUN | IFF_NO_PI, no
// IFF_VNET_HDR): exactly one write(2) per segment sent and one read(2) per
// datagram received, nothing else. Shared by the two ceiling tools of issue 16
// (tun_write_ceiling, tun_read_ceiling), which measure what one read or write
// per packet costs on this machine with no TCP stack in the way.
//
// LinkIo::kUring (built only with liburing) keeps one write per datagram but
// not one system call per write: send() queues an io_uring WRITE, and flush()
// (or a full queue of kUringBatch) submits every queued WRITE in one
// io_uring_enter and reaps their completions. Reads stay one read(2) each.
// LinkIo::kUringReads also batches reads: when the last batch is used up,
// receive() submits the queued WRITEs and kUringBatch READs (RWF_NOWAIT, so an
// empty device completes them with -EAGAIN at once) in ONE io_uring_enter,
// then hands the datagrams read out one per call. A batch that met -EAGAIN
// found the device empty: receive() reports idle once it is used up.
//
// Headers are built and parsed by wire/'s serializers (correct IPv4 and TCP
// checksums over header and payload, as any stack on a plain device must
// compute). Datagrams that are not IPv4/TCP of this connection's 4-tuple are
// read, counted in `ignored` and skipped.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "wire/tcp_header.hh"

namespace tinytcp::bench {

struct TunCeilingCounters {
  uint64_t writes = 0;   // datagrams written (write(2) calls, or io_uring WRITEs)
  uint64_t reads = 0;    // read(2) calls (or io_uring READs) that returned a datagram
  uint64_t ignored = 0;  // datagrams read that are not this connection's
  uint64_t enters = 0;   // io_uring_enter calls that submitted WRITEs or READs
};

enum class LinkIo {
  kSyscall,    // one write(2) per datagram sent, one read(2) per datagram received
  kUring,      // WRITEs batched through io_uring, read(2) per datagram
  kUringReads  // WRITEs and READs batched, both in one io_uring_enter per batch of reads
};

// True when this build has liburing (LinkIo::kUring is usable).
bool uring_available();

class TunCeilingLink {
 public:
  static constexpr int kUringBatch = 64;  // WRITEs queued before flush() is forced

  // Opens the existing device `dev` (e.g. "tun144") non-blocking; throws
  // std::runtime_error with the reason when it cannot (also when `io` is
  // kUring and io_uring cannot be set up, or the build has no liburing).
  TunCeilingLink(const std::string& dev, uint32_t local_ip, uint32_t peer_ip,
                 LinkIo io = LinkIo::kSyscall);
  ~TunCeilingLink();
  TunCeilingLink(const TunCeilingLink&) = delete;
  TunCeilingLink& operator=(const TunCeilingLink&) = delete;

  // Serializes IPv4 + `header` + `payload` (local -> peer) and writes it in one
  // write(2) (kUring: queues one WRITE; written at the next flush()). Throws on
  // a write error.
  void send(const wire::TcpHeader& header, std::string_view payload);

  // kUring: submits the queued WRITEs in one io_uring_enter and waits for their
  // completions; throws if one failed or was short. kSyscall: nothing to do.
  void flush();

  // One read(2) (kUringReads: the next datagram of a batch read, see above):
  // the TCP segment from the peer if one was waiting (payload aliases an
  // internal buffer, valid until the next call), nullopt when the device had
  // nothing (EAGAIN) or the datagram was ignored. `*idle` tells the two apart.
  // kUring*: queued WRITEs are not submitted by waiting; flush() before.
  std::optional<wire::TcpView> receive(bool* idle);

  // Waits up to `timeout_ms` for a datagram to read; false on timeout.
  bool wait_readable(int timeout_ms) const;

  const TunCeilingCounters& counters() const { return counters_; }

 private:
  struct Uring;  // liburing's ring and the queued datagrams, only with kUring

  void write_now(const char* data, size_t size);
  // kUringReads: the queued WRITEs and a batch of READs in one io_uring_enter.
  void read_batch();
  // Checks one WRITE's completion (throws on an error or a short write).
  void check_write(int result, size_t expected);
  // The TCP segment of this connection in `datagram`, or nullopt (ignored).
  std::optional<wire::TcpView> parse(std::string_view datagram);

  int fd_ = -1;
  std::unique_ptr<Uring> uring_;
  uint32_t local_ip_;
  uint32_t peer_ip_;
  uint16_t ip_id_ = 0;
  TunCeilingCounters counters_;
  char out_[2048];
  char in_[65536];
};

// Seconds of user and system CPU time this process has used so far.
struct CpuTimes {
  double user_s = 0;
  double system_s = 0;
};
CpuTimes process_cpu_times();

}  // namespace tinytcp::bench

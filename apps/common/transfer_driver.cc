#include "common/transfer_driver.hh"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "common/kernel_tcp.hh"

namespace tinytcp::apps {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr size_t kReadBuffer = 256 * 1024;

}  // namespace

double monotonic_seconds() {
  return static_cast<double>(now_ns()) / 1e9;
}

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  auto v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

PumpOutcome pump(int fd, const PumpIo& io, Duration idle_timeout) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  std::string buf(kReadBuffer, '\0');
  int64_t last_activity = now_ns();
  uint64_t unacknowledged = kernel_unacknowledged(fd);
  for (;;) {
    if (io.done()) {
      return {PumpResult::Done, {}};
    }
    const std::string_view out = io.output();
    pollfd p{fd, static_cast<short>(POLLIN | (out.empty() ? 0 : POLLOUT)), 0};
    const int rc = ::poll(&p, 1, 100);
    if (io.tick) {
      io.tick();
    }
    if (rc < 0) {
      if (errno == EINTR) {
        continue;
      }
      return {PumpResult::Error, fmt::format("poll: {}", std::strerror(errno))};
    }
    if (rc == 0) {
      // The peer acknowledging queued bytes is progress too.
      if (const uint64_t queued = kernel_unacknowledged(fd); queued != unacknowledged) {
        unacknowledged = queued;
        last_activity = now_ns();
      }
      if (now_ns() - last_activity > idle_timeout.count()) {
        return {PumpResult::Timeout,
                fmt::format("no progress for {:.0f} s", to_seconds(idle_timeout))};
      }
      continue;
    }
    last_activity = now_ns();
    if ((p.revents & POLLOUT) && !out.empty()) {
      const ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        io.consume(static_cast<size_t>(n));
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return {PumpResult::Error, fmt::format("connection lost: {}", std::strerror(errno))};
      }
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n > 0) {
        io.input(std::string_view(buf).substr(0, static_cast<size_t>(n)));
      } else if (n == 0) {
        return {io.done() ? PumpResult::Done : PumpResult::PeerClosed, {}};
      } else if (errno != EAGAIN && errno != EINTR) {
        return {PumpResult::Error, fmt::format("connection lost: {}", std::strerror(errno))};
      }
    }
  }
}

Progress::Progress(std::string label)
    : label_(std::move(label)), enabled_(::isatty(STDERR_FILENO) == 1), start_ns_(now_ns()) {}

void Progress::update(uint64_t done, uint64_t total, uint64_t retransmits) {
  if (!enabled_) {
    return;
  }
  const int64_t now = now_ns();
  if (drawn_ && now - last_draw_ns_ < 100'000'000) {
    return;
  }
  last_draw_ns_ = now;
  drawn_ = true;
  const double elapsed = static_cast<double>(now - start_ns_) / 1e9;
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1;
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(fraction * kWidth);
  const std::string eta = rate > 0 && done < total
                              ? fmt::format("{:.0f}s", static_cast<double>(total - done) / rate)
                              : std::string("-");
  std::fprintf(stderr, "\r%s [%s%s] %3.0f%% %s / %s  %s/s  ETA %s  retrans %llu\033[K",
               label_.c_str(), std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(kWidth - filled), ' ').c_str(), fraction * 100,
               human_bytes(done).c_str(), human_bytes(total).c_str(),
               human_bytes(static_cast<uint64_t>(rate)).c_str(), eta.c_str(),
               static_cast<unsigned long long>(retransmits));
}

void Progress::clear() {
  if (enabled_ && drawn_) {
    std::fprintf(stderr, "\r\033[K");
  }
}

}  // namespace tinytcp::apps

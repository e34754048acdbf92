#pragma once

// BlockingStack: tinytcp behind ordinary file descriptors, for simple apps.
//
// A background thread runs a StackRuntime (the Host on a TUN/TAP device or the
// UDP tunnel). Every TCP connection is bridged to one end of a
// socketpair(AF_UNIX, SOCK_STREAM); the app gets the other end and uses plain
// blocking read()/write()/shutdown()/close() on it, or any code written for
// kernel sockets (apps/common/transfer_driver's pump, for one).
//
//   app fd --- socket pair --- bridge (stack thread) --- Host socket --- TCP
//
//   app writes           -> Host::write as the send buffer has room
//   app shutdown(SHUT_WR) or close -> our FIN after the data (Host::shutdown_write)
//   peer's bytes         -> written to the pair as the app reads
//   peer's FIN           -> shutdown(SHUT_WR) of the bridge end: the app reads EOF
//   reset or timeout     -> the bridge end is closed: the app reads EOF, and
//                           last_error(fd) says why
//   app closes its fd    -> what it wrote and is still in the pair is taken
//                           (bounded by the pair's buffers) and sent, then
//                           Host::close: our FIN after every byte (an abort,
//                           so a RST, if the peer's data was left unread)
//
// Connections are taken from the Host's listener only while fewer than
// `backlog` wait for accept(); the rest wait in the Host's own bounded
// backlog (past it the Host resets them), and each accept() makes room for
// one more. Running out of file descriptors for a pair (EMFILE, ENFILE) is
// counted and retried 100 ms later on accept, and fails connect() with that
// error; never an exception on the stack thread.
//
// Destroying the stack closes like a process's exit: listeners stop, fds still
// queued for accept() are closed and their connections reset, and every other
// connection is closed as if its app closed its fd (the bytes in the pair are
// sent, then our FIN). The destructor returns once every connection's FIN
// is acknowledged (the peer has all of it; FIN-WAIT-2 and TIME-WAIT are left
// to go quietly, as nothing answers for them once the stack is gone), or
// after kCloseLinger; what is still undelivered then is reset.
//
// Calls from the app thread are posted to the stack thread and waited for;
// the stack itself stays single-threaded.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "io/file_descriptor.hh"
#include "runtime/stack_runtime.hh"
#include "util/time.hh"
#include "wire/ipv4.hh"

namespace tinytcp::runtime {

struct BlockingStackStats {
  uint64_t pair_failures = 0;        // no socket pair for a connection (EMFILE, ENFILE, ...)
  uint64_t flushed_after_close = 0;  // apps that closed with bytes still in the pair: sent
  uint64_t reset_after_close = 0;    // ... or reset: more than kMaxFlushBytes left
  uint64_t closed_unaccepted = 0;    // queued for accept() when the stack went
};

class BlockingStack {
 public:
  // Bytes an app that closed its fd may leave in the pair to be sent; past
  // it the connection is reset (the pair's buffers hold far less).
  static constexpr size_t kMaxFlushBytes = 16 << 20;
  // Opens the device and starts the stack thread; throws std::runtime_error
  // (one line for the user) like StackRuntime.
  explicit BlockingStack(RuntimeOptions options);
  // How long the destructor waits for closed connections to finish.
  static constexpr Duration kCloseLinger = std::chrono::seconds(5);
  // Closes every connection (see above) and stops the thread.
  ~BlockingStack();
  BlockingStack(const BlockingStack&) = delete;
  BlockingStack& operator=(const BlockingStack&) = delete;

  // Connects and returns the app's end (blocking, close-on-exec; the caller
  // owns it). Throws std::runtime_error "cannot reach A:P: why" on refusal or
  // when `timeout` passes.
  int connect(wire::Ipv4Address remote, uint16_t port, Duration timeout);

  // Listens on `port`; throws std::runtime_error if it cannot.
  void listen(uint16_t port, size_t backlog = 0);
  // The next connection to a port given to listen(), or -1 after `timeout`.
  int accept(uint16_t port, Duration timeout);

  // Why the connection behind `fd` ended, once it ended abnormally (a reset,
  // a timeout); empty while it is open or after a normal close.
  std::string last_error(int fd) const;

  BlockingStackStats stats() {
    return with_host([this](stack::Host&) { return stats_; });
  }

  // Runs `f` on the stack thread with the Host and waits for it (counters,
  // connection state).
  template <typename F>
  auto with_host(F f) -> decltype(f(std::declval<stack::Host&>())) {
    using R = decltype(f(std::declval<stack::Host&>()));
    std::packaged_task<R()> task([&] { return f(runtime_->host()); });
    auto result = task.get_future();
    post([&task] { task(); });
    return result.get();
  }

 private:
  struct Bridge;

  void post(std::function<void()> command);
  void run();
  void on_commands();
  void on_event(stack::SocketId id, stack::SocketEvent event);
  void drain();
  void handle(stack::SocketId id, stack::SocketEvent event);
  void on_ready(stack::SocketId id, uint32_t ready);
  // A socket pair for the next bridge, or nullptr (errno set).
  std::unique_ptr<Bridge> make_bridge();
  Bridge& add_bridge(stack::SocketId id, std::unique_ptr<Bridge> bridge);
  void accept_from_host(uint16_t port);
  void on_app_closed(Bridge& b);
  void flush_after_close(Bridge& b);
  void watch(Bridge& b);
  void from_app(Bridge& b);
  void to_app(Bridge& b);
  void finish(stack::SocketId id, const std::string& error);
  void close_all();
  void abort_all();

  std::unique_ptr<StackRuntime> runtime_;
  io::FileDescriptor wake_;  // eventfd: commands are waiting

  mutable std::mutex mutex_;
  std::vector<std::function<void()>> commands_;
  std::condition_variable accepted_cv_;
  std::map<uint16_t, std::deque<int>> accepted_;  // app fds ready for accept()
  std::map<int, std::string> errors_;             // app fd -> why it ended

  // Stack thread only.
  struct Listening {
    stack::SocketId id = 0;
    size_t backlog = 0;  // fds queued for accept() at most
    bool retry_armed = false;
  };
  std::map<uint16_t, Listening> listeners_;
  std::unique_ptr<Bridge> spare_;  // made but not used: the Host had no connection
  BlockingStackStats stats_;
  std::map<stack::SocketId, std::unique_ptr<Bridge>> bridges_;
  std::vector<char> buffer_;
  std::deque<std::pair<stack::SocketId, stack::SocketEvent>> events_;
  bool handling_ = false;
  bool closing_ = false;      // the destructor began: waiting for connections to finish
  bool linger_over_ = false;  // ... until kCloseLinger passed
  bool quit_ = false;

  std::thread thread_;
};

}  // namespace tinytcp::runtime

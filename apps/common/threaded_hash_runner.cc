#include "common/threaded_hash_runner.hh"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace tinytcp::apps {

ThreadedHashRunner::ThreadedHashRunner() : wakeup_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (wakeup_fd_ < 0) {
    throw std::runtime_error(fmt::format("eventfd: {}", std::strerror(errno)));
  }
  // Started last, once the object is whole: a thread started in the member
  // initializers would call run() on an object still under construction.
  thread_ = std::thread([this] { run(); });
}

ThreadedHashRunner::~ThreadedHashRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  ::close(wakeup_fd_);
}

void ThreadedHashRunner::start(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = std::move(job);
    result_.reset();
  }
  changed_.notify_all();
}

std::optional<proto::HashRunner::Digest> ThreadedHashRunner::result() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!result_) {
    return std::nullopt;
  }
  uint64_t count = 0;
  static_cast<void>(::read(wakeup_fd_, &count, sizeof count));  // clear the wakeup
  auto out = std::move(result_);
  result_.reset();
  return out;
}

void ThreadedHashRunner::abandon() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !job_ && !busy_; });
  result_.reset();
  uint64_t count = 0;
  static_cast<void>(::read(wakeup_fd_, &count, sizeof count));
}

uint64_t ThreadedHashRunner::jobs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_;
}

void ThreadedHashRunner::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stop_ || job_; });
    if (!job_) {
      return;  // stop_, and nothing left to run
    }
    Job job = std::move(job_);
    job_ = nullptr;
    busy_ = true;
    lock.unlock();
    Digest digest = job();
    lock.lock();
    busy_ = false;
    result_ = std::move(digest);
    ++jobs_;
    const uint64_t one = 1;
    static_cast<void>(::write(wakeup_fd_, &one, sizeof one));
    changed_.notify_all();
  }
}

}  // namespace tinytcp::apps

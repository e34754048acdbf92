#include "common/chunk_worker.hh"

#include <algorithm>
#include <utility>

namespace tinytcp::apps {

ChunkWorker::ChunkWorker(Process process, size_t chunk_bytes, size_t max_chunks)
    : process_(std::move(process)),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 1)),
      max_chunks_(std::max<size_t>(max_chunks, 1)),
      worker_([this] { run(); }) {
  current_.reserve(chunk_bytes_);
}

ChunkWorker::~ChunkWorker() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    hand_over(lock);
    stop_ = true;
  }
  work_.notify_one();
  worker_.join();
}

void ChunkWorker::append(std::string_view data) {
  while (!data.empty()) {
    const size_t n = std::min(data.size(), chunk_bytes_ - current_.size());
    current_.append(data.data(), n);
    data.remove_prefix(n);
    if (current_.size() == chunk_bytes_) {
      std::unique_lock<std::mutex> lock(mutex_);
      hand_over(lock);
    }
  }
}

void ChunkWorker::hand_over(std::unique_lock<std::mutex>& lock) {
  if (current_.empty()) {
    return;
  }
  if (queue_.size() >= max_chunks_) {
    ++stalls_;
    done_.wait(lock, [this] { return queue_.size() < max_chunks_; });
  }
  queue_.push_back(std::move(current_));
  if (!spare_.empty()) {
    current_ = std::move(spare_.back());
    spare_.pop_back();
  } else {
    current_ = std::string();
    current_.reserve(chunk_bytes_);
  }
  current_.clear();
  work_.notify_one();
}

void ChunkWorker::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  hand_over(lock);
  done_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void ChunkWorker::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) {
      return;  // stop_, and nothing left to process
    }
    std::string chunk = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    done_.notify_all();  // room for another chunk
    lock.unlock();
    process_(chunk);
    lock.lock();
    busy_ = false;
    chunk.clear();
    spare_.push_back(std::move(chunk));
    done_.notify_all();
  }
}

}  // namespace tinytcp::apps

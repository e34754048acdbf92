#include "common/chunk_worker.hh"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace tinytcp::apps {

ChunkWorker::ChunkWorker(Process process, size_t chunk_bytes, size_t max_chunks)
    : process_(std::move(process)),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 1)),
      max_chunks_(std::max<size_t>(max_chunks, 1)),
      current_(new_chunk()),
      worker_([this] { run(); }) {}

ChunkWorker::Chunk ChunkWorker::new_chunk() const {
  const size_t rounded = (chunk_bytes_ + kAlignment - 1) / kAlignment * kAlignment;
  Chunk chunk;
  chunk.bytes.reset(static_cast<char*>(std::aligned_alloc(kAlignment, rounded)));
  if (!chunk.bytes) {
    throw std::bad_alloc();
  }
  return chunk;
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
    // Up to the next multiple of chunk_bytes_ in the stream.
    const size_t room = chunk_bytes_ - static_cast<size_t>(offset_ % chunk_bytes_);
    const size_t n = std::min(data.size(), room);
    std::memcpy(current_.bytes.get() + current_.size, data.data(), n);
    current_.size += n;
    offset_ += n;
    data.remove_prefix(n);
    if (n == room) {
      std::unique_lock<std::mutex> lock(mutex_);
      hand_over(lock);
    }
  }
}

void ChunkWorker::set_offset(uint64_t offset) {
  if (current_.size > 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    hand_over(lock);
  }
  offset_ = offset;
}

void ChunkWorker::hand_over(std::unique_lock<std::mutex>& lock) {
  if (current_.size == 0) {
    return;
  }
  if (queue_.size() >= max_chunks_) {
    ++stalls_;
    done_.wait(lock, [this] { return queue_.size() < max_chunks_; });
  }
  // The replacement first: if allocating it throws, current_ is still whole.
  Chunk next;
  if (!spare_.empty()) {
    next = std::move(spare_.back());
    spare_.pop_back();
  } else {
    next = new_chunk();
  }
  next.size = 0;
  queue_.push_back(std::move(current_));
  current_ = std::move(next);
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
    Chunk chunk = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    done_.notify_all();  // room for another chunk
    lock.unlock();
    process_(std::string_view(chunk.bytes.get(), chunk.size));
    lock.lock();
    busy_ = false;
    spare_.push_back(std::move(chunk));
    done_.notify_all();
  }
}

}  // namespace tinytcp::apps

#include "common/threaded_hash.hh"

namespace tinytcp::apps {

ThreadedContentHash::ThreadedContentHash(size_t chunk_bytes, size_t max_chunks)
    : worker_([this](std::string_view chunk) { sha_.update(chunk); }, chunk_bytes, max_chunks) {}

Sha256Digest ThreadedContentHash::finish() {
  worker_.drain();
  return sha_.finish();
}

Sha256Digest ThreadedContentHash::peek() {
  worker_.drain();
  return sha_.peek();
}

}  // namespace tinytcp::apps

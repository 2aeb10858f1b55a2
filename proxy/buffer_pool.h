// The proxy's per-connection byte buffers and the pool their storage comes from. Each
// connection has two fixed buffers (client -> proxy, upstream -> proxy); their storage is
// an anonymous mapping taken on first use and handed back to a bounded cache when the
// connection ends. Used only on the server's io_context thread.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil::proxy {

// A buffer's storage: its own anonymous mapping, not the malloc heap. Buffers are the
// big per-connection allocations (64 KiB per direction). In the heap, a burst of 1,500
// connections spread them over ~140 MB of brk space with small objects that outlive the
// burst scattered between them (Asio's reactor keeps one state per socket it ever held
// at once, in a pool it never frees), and malloc_trim cannot give back the page heading
// each free gap: 2-3 MB more stayed resident after every connection had closed. A
// mapping goes back whole. Falls back to the heap if the kernel refuses a mapping.
class BufferStorage {
 public:
  BufferStorage() = default;
  explicit BufferStorage(std::size_t bytes) : size_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      data_ = static_cast<char*>(p);
      mapped_ = true;
    } else {
      heap_ = std::make_unique_for_overwrite<char[]>(bytes);
      data_ = heap_.get();
    }
  }
  ~BufferStorage() {
    if (mapped_) ::munmap(data_, size_);
  }
  BufferStorage(BufferStorage&& o) noexcept
      : size_(std::exchange(o.size_, 0)),
        data_(std::exchange(o.data_, nullptr)),
        mapped_(std::exchange(o.mapped_, false)),
        heap_(std::move(o.heap_)) {}
  BufferStorage& operator=(BufferStorage&& o) noexcept {
    BufferStorage taken(std::move(o));  // this one's old storage goes with `taken`
    std::swap(size_, taken.size_);
    std::swap(data_, taken.data_);
    std::swap(mapped_, taken.mapped_);
    std::swap(heap_, taken.heap_);
    return *this;
  }
  char* get() const { return data_; }
  std::size_t size() const { return size_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  std::size_t size_ = 0;
  char* data_ = nullptr;
  bool mapped_ = false;
  std::unique_ptr<char[]> heap_;  // only when the mapping failed
};

// Storages of finished connections, kept for the next ones: a mapping per connection
// (mmap, first-touch faults, munmap) halved the new-tunnel rate. Bounded, so a burst
// hands back all but kKeep at once, and emptied when the server goes idle. Used only on
// the server's io_context thread.
class BufferCache {
 public:
  static constexpr std::size_t kKeep = 64;
  BufferStorage take(std::size_t bytes) {
    if (!free_.empty() && free_.back().size() == bytes) {
      BufferStorage s = std::move(free_.back());
      free_.pop_back();
      return s;
    }
    return BufferStorage(bytes);
  }
  void give(BufferStorage s) {
    if (s && free_.size() < kKeep) free_.push_back(std::move(s));
  }
  void clear() {
    free_.clear();
    free_.shrink_to_fit();
  }

 private:
  std::vector<BufferStorage> free_;
};

// A fixed-capacity byte buffer: bytes arrive at the end, leave from the front. Storage is
// taken on first use, so an idle connection costs only its bookkeeping. `cache` must
// outlive the buffer.
class Buffer {
 public:
  Buffer(std::size_t capacity, BufferCache* cache) : cap_(capacity), cache_(cache) {}
  ~Buffer() { cache_->give(std::move(data_)); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::string_view view() const {
    if (!data_) return {};
    return {data_.get() + begin_, end_ - begin_};
  }
  std::size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  bool full() const { return begin_ == 0 && end_ == cap_; }
  void consume(std::size_t n) {
    begin_ += std::min(n, size());
    if (begin_ == end_) begin_ = end_ = 0;
  }
  // Free space at the end (the live bytes are moved to the front when that frees some).
  boost::asio::mutable_buffer prepare() {
    // Fresh anonymous pages: only those actually written become resident.
    if (!data_) data_ = cache_->take(cap_);
    if (begin_ > 0 && end_ == cap_) {
      std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    return {data_.get() + end_, cap_ - end_};
  }
  void commit(std::size_t n) { end_ += n; }
  // Hands an empty buffer's storage back to the cache (the next prepare() takes one
  // again): a spliced tunnel keeps no buffer for its lifetime.
  void release() {
    if (!empty()) return;
    cache_->give(std::move(data_));
    data_ = BufferStorage();
    begin_ = end_ = 0;
  }

 private:
  BufferStorage data_;
  std::size_t cap_;
  BufferCache* cache_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace vigil::proxy

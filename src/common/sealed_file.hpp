// A memory file (memfd) sealed against every change and mapped read-only, as a Buffer's storage:
// how a tensor that another process wrote into a file of its own (a model worker's output,
// src/ml/sandbox/channel.hpp) arrives, until the server's shared-memory pool takes the file over
// (SharedMemory::adopt_sealed) or the bytes are copied to the heap.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>

#include "common/buffer.hpp"

namespace slipstream {

class SealedFile final : public BufferStorage {
 public:
  /// Takes `fd` and the read-only `mapping` of its first `length` bytes.
  SealedFile(int fd, void* mapping, std::size_t length)
      : fd_(fd), mapping_(mapping), length_(length) {}
  ~SealedFile() override {
    if (length_ > 0) ::munmap(mapping_, length_);
    ::close(fd_);
  }
  SealedFile(const SealedFile&) = delete;
  SealedFile& operator=(const SealedFile&) = delete;

  int fd() const noexcept { return fd_; }

 private:
  int fd_;
  void* mapping_;
  std::size_t length_;
};

}  // namespace slipstream

// A SegmentPool::Create for tests: writer segments from `shm`, a StreamError when it is full.
#pragma once

#include <string>

#include "server/shm/shm.hpp"
#include "server/stream/segment_pool.hpp"
#include "server/stream/stream_error.hpp"

namespace slipstream::server {

inline SegmentPool::Create segment_creator(SharedMemory& shm) {
  return [&shm](std::size_t size) {
    ShmFailure failure;
    std::string error;
    auto segment = shm.create_writer_segment(size, MemoryReservation(), &failure, &error);
    if (!segment) throw StreamError(error);
    return segment;
  };
}

}  // namespace slipstream::server

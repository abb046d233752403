// Reductions at the source on the writer side (StreamWriterOptions::reductions): the chunks of
// their inputs a writer rank puts in a step, recorded, and the functions run on them at end_step.
// client_stream.cpp records and puts; this file knows what a reduction takes and gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slipstream/stream.hpp"
#include "slipstream/tensor_data.hpp"

namespace slipstream::client {

class StreamReductions {
 public:
  StreamReductions() = default;
  // Checks `reductions` and loads the functions of those that have none (InvalidArgumentError
  // naming the reduction by its output).
  StreamReductions(std::vector<StreamReduction> reductions, std::uint32_t rank,
                   std::uint32_t writers);

  bool empty() const noexcept { return reductions_.empty(); }

  // What a component is to the reductions: not an input, an input also sent, or an input only.
  enum class Use { kNone, kInputSent, kInputOnly };
  Use use(std::string_view component) const;

  // Records a chunk of an input for the open step: `data` borrowed until clear(), or held in
  // `memory` (a loan's).
  void record(std::string_view component, DType dtype, std::span<const std::uint64_t> extent,
              const void* data, std::size_t bytes, std::unique_ptr<std::byte[]> memory = nullptr);

  // This rank's row of a reduction's output, to put as a chunk.
  struct Derived {
    std::string component;
    Tensor value;
    std::vector<std::uint64_t> global_extent, offset, extent;
  };
  // Runs every reduction on the chunks recorded. InvalidArgumentError naming the reduction and
  // `step` when an input has no chunk, its chunks do not join, or the function fails or returns
  // nothing.
  std::vector<Derived> run(std::int64_t step) const;

  // The attributes that say where each output came from (stream-level, on the output's path).
  struct Provenance {
    std::string path, name;
    AttributeValue value;
  };
  std::vector<Provenance> provenance() const;

  // Forgets the step's records (and the loans' memory they hold).
  void clear() noexcept { recorded_.clear(); }

 private:
  struct Recorded {
    DType dtype;
    std::vector<std::uint64_t> extent;
    const void* data;
    std::size_t bytes;
    std::unique_ptr<std::byte[]> memory;
  };
  // One input as the function gets it: the recorded chunk, or the chunks joined.
  struct Joined {
    DType dtype;
    std::vector<std::int64_t> shape;
    const void* data;
    std::size_t bytes;
    std::unique_ptr<std::byte[]> memory;
  };
  Joined join(const StreamReduction& reduction, std::string_view input, std::int64_t step) const;

  std::vector<StreamReduction> reductions_;
  std::map<std::string, bool, std::less<>> inputs_;  // input -> whether its chunks are sent
  std::map<std::string, std::vector<Recorded>, std::less<>> recorded_;
  std::uint32_t rank_ = 0;
  std::uint32_t writers_ = 1;
};

}  // namespace slipstream::client

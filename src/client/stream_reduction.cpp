#include "client/stream_reduction.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "slipstream/error.hpp"

namespace slipstream {
namespace {

std::mutex& loader_mutex() {
  static std::mutex mutex;
  return mutex;
}
ReductionLoader& installed_loader() {
  static ReductionLoader loader;
  return loader;
}

// Where libslipstream_local may be, as absolute paths (a sanitizer's dlopen interceptor hides
// which object calls dlopen, and with it this library's run path): beside this library
// (installed), then in each directory of this library's own search path (its RUNPATH: the build
// tree), then by name alone (LD_LIBRARY_PATH, the loader's cache).
std::vector<std::string> local_library_candidates(const std::string& name) {
  std::vector<std::string> candidates;
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&set_reduction_loader), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {name};
  }
  const std::string self = info.dli_fname;
  if (const std::size_t slash = self.rfind('/'); slash != std::string::npos) {
    candidates.push_back(self.substr(0, slash + 1) + name);
  }
  if (void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
    Dl_serinfo size{};
    if (dlinfo(handle, RTLD_DI_SERINFOSIZE, &size) == 0 && size.dls_size >= sizeof(Dl_serinfo)) {
      std::vector<std::max_align_t> storage(size.dls_size / sizeof(std::max_align_t) + 1);
      auto* paths = reinterpret_cast<Dl_serinfo*>(storage.data());
      *paths = size;  // dls_size and dls_cnt, as RTLD_DI_SERINFO expects
      if (dlinfo(handle, RTLD_DI_SERINFO, paths) == 0) {
        for (unsigned i = 0; i < paths->dls_cnt; ++i) {
          const std::string dir = paths->dls_serpath[i].dls_name;
          if (!dir.empty()) candidates.push_back(dir + "/" + name);
        }
      }
    }
    dlclose(handle);
  }
  candidates.push_back(name);
  return candidates;
}

// The loader libslipstream_local installs when it is loaded. A writer with a reduction to load
// from a file loads that library itself when the program did not link it (a simulation need not
// link libtorch to use a reduction).
ReductionLoader current_loader() {
  {
    std::lock_guard lock(loader_mutex());
    if (installed_loader()) return installed_loader();
  }
  const std::string name = std::string("libslipstream_local.so.") + SLIPSTREAM_SOVERSION;
  void* loaded = nullptr;
  for (const std::string& candidate : local_library_candidates(name)) {
    loaded = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (loaded != nullptr) break;
  }
  if (loaded == nullptr) {
    const char* why = dlerror();
    throw InvalidArgumentError(
        "a reduction loaded from a file needs " + name + " (TorchScript and ONNX on the CPU), " +
        "which could not be loaded: " + (why != nullptr ? why : "unknown error") +
        "; link slipstream::local, or give StreamReduction::function");
  }
  std::lock_guard lock(loader_mutex());
  if (!installed_loader()) {
    throw InvalidArgumentError(name + " is loaded but installed no reduction loader (a static "
                               "libslipstream cannot use it): give StreamReduction::function");
  }
  return installed_loader();
}

std::string named(const StreamReduction& reduction) {
  return "reduction to '" + reduction.output + "'";
}

}  // namespace

void set_reduction_loader(ReductionLoader loader) {
  std::lock_guard lock(loader_mutex());
  installed_loader() = std::move(loader);
}

namespace client {

StreamReductions::StreamReductions(std::vector<StreamReduction> reductions, std::uint32_t rank,
                                   std::uint32_t writers)
    : reductions_(std::move(reductions)), rank_(rank), writers_(writers) {
  std::set<std::string, std::less<>> outputs;
  for (StreamReduction& reduction : reductions_) {
    if (reduction.output.empty()) {
      throw InvalidArgumentError("a reduction needs an output component");
    }
    if (!outputs.insert(reduction.output).second) {
      throw InvalidArgumentError(named(reduction) + ": another reduction has the same output");
    }
    if (reduction.inputs.empty()) throw InvalidArgumentError(named(reduction) + ": no inputs");
    for (const std::string& input : reduction.inputs) {
      if (input.empty()) throw InvalidArgumentError(named(reduction) + ": an empty input name");
      inputs_[input] = inputs_[input] || reduction.send_inputs;
    }
    if (!reduction.function) {
      if (reduction.source.empty()) {
        throw InvalidArgumentError(named(reduction) + ": neither a function nor a source");
      }
      try {
        reduction.function = current_loader()(reduction.source);
      } catch (const std::exception& e) {
        throw InvalidArgumentError(named(reduction) + ": loading '" + reduction.source +
                                   "': " + e.what());
      }
      if (!reduction.function) {
        throw InvalidArgumentError(named(reduction) + ": no function loaded from '" +
                                   reduction.source + "'");
      }
    }
  }
  for (const StreamReduction& reduction : reductions_) {
    if (inputs_.contains(reduction.output)) {
      throw InvalidArgumentError(named(reduction) + ": its output is an input of a reduction");
    }
  }
}

StreamReductions::Use StreamReductions::use(std::string_view component) const {
  auto found = inputs_.find(component);
  if (found == inputs_.end()) return Use::kNone;
  return found->second ? Use::kInputSent : Use::kInputOnly;
}

void StreamReductions::record(std::string_view component, DType dtype,
                              std::span<const std::uint64_t> extent, const void* data,
                              std::size_t bytes, std::unique_ptr<std::byte[]> memory) {
  auto found = recorded_.find(component);
  if (found == recorded_.end()) found = recorded_.emplace(std::string(component), std::vector<Recorded>()).first;
  found->second.push_back(Recorded{dtype, std::vector<std::uint64_t>(extent.begin(), extent.end()),
                                   data, bytes, std::move(memory)});
}

StreamReductions::Joined StreamReductions::join(const StreamReduction& reduction,
                                                std::string_view input, std::int64_t step) const {
  const std::string where =
      named(reduction) + " in step " + std::to_string(step) + ": input '" + std::string(input) + "'";
  auto found = recorded_.find(input);
  if (found == recorded_.end() || found->second.empty()) {
    throw InvalidArgumentError(where + " has no chunk on writer rank " + std::to_string(rank_) +
                               " (put an empty one where a rank has no elements)");
  }
  const std::vector<Recorded>& chunks = found->second;
  const Recorded& first = chunks.front();
  if (first.extent.empty() && chunks.size() > 1) {
    throw InvalidArgumentError(where + ": several chunks of a scalar component");
  }
  Joined joined{first.dtype, {}, first.data, first.bytes, nullptr};
  for (std::uint64_t n : first.extent) joined.shape.push_back(static_cast<std::int64_t>(n));
  if (chunks.size() == 1) return joined;
  // Joined along the first dimension, in the order they were put.
  std::size_t bytes = 0;
  for (const Recorded& chunk : chunks) {
    if (chunk.dtype != first.dtype || chunk.extent.size() != first.extent.size() ||
        !std::equal(chunk.extent.begin() + 1, chunk.extent.end(), first.extent.begin() + 1)) {
      throw InvalidArgumentError(where + ": its chunks on this rank differ in type or in a "
                                 "dimension after the first, so they cannot be joined");
    }
    bytes += chunk.bytes;
  }
  joined.memory = std::make_unique_for_overwrite<std::byte[]>(bytes);
  std::size_t at = 0;
  std::int64_t rows = 0;
  for (const Recorded& chunk : chunks) {
    if (chunk.bytes > 0) std::memcpy(joined.memory.get() + at, chunk.data, chunk.bytes);
    at += chunk.bytes;
    rows += static_cast<std::int64_t>(chunk.extent.front());
  }
  joined.shape.front() = rows;
  joined.data = joined.memory.get();
  joined.bytes = bytes;
  return joined;
}

std::vector<StreamReductions::Derived> StreamReductions::run(std::int64_t step) const {
  std::vector<Derived> derived;
  derived.reserve(reductions_.size());
  for (const StreamReduction& reduction : reductions_) {
    std::vector<Joined> joined;
    joined.reserve(reduction.inputs.size());
    for (const std::string& input : reduction.inputs) joined.push_back(join(reduction, input, step));
    std::vector<TensorRef> refs;
    refs.reserve(joined.size());
    for (std::size_t i = 0; i < joined.size(); ++i) {
      refs.push_back(TensorRef{reduction.inputs[i], joined[i].dtype, joined[i].data,
                               joined[i].bytes, joined[i].shape, MemoryOrder::kC});
    }
    const std::string where = named(reduction) + " in step " + std::to_string(step);
    std::vector<Tensor> results;
    try {
      results = reduction.function(refs);
    } catch (const std::exception& e) {
      throw InvalidArgumentError(where + " failed: " + e.what());
    }
    if (results.empty()) throw InvalidArgumentError(where + ": the function returned nothing");
    Derived d{reduction.output, std::move(results.front()), {writers_}, {rank_}, {1}};
    for (std::int64_t n : d.value.shape()) {
      d.global_extent.push_back(static_cast<std::uint64_t>(n));
      d.offset.push_back(0);
      d.extent.push_back(static_cast<std::uint64_t>(n));
    }
    derived.push_back(std::move(d));
  }
  return derived;
}

std::vector<StreamReductions::Provenance> StreamReductions::provenance() const {
  std::vector<Provenance> attributes;
  for (const StreamReduction& reduction : reductions_) {
    const std::string source = reduction.source.empty() ? "a function of the program's"
                                                        : reduction.source;
    attributes.push_back({reduction.output, "reductionSource", source});
    attributes.push_back({reduction.output, "reductionInputs", reduction.inputs});
    attributes.push_back({reduction.output, "reductionLayout",
                          "one row per writer rank: the function's result on that rank's chunks"});
  }
  return attributes;
}

}  // namespace client
}  // namespace slipstream

// C API: stream writers, readers and the steps they hand out (the "Streams" section of
// include/slipstream.h) over slipstream::StreamWriter, StreamReader and StreamStep.
#include <chrono>
#include <cstring>
#include <deque>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "capi/capi_internal.hpp"
#include "slipstream/stream.hpp"

using namespace slipstream::capi;
using slipstream::InvalidArgumentError;

struct slipstream_stream_writer {
  explicit slipstream_stream_writer(slipstream::StreamWriter w) : writer(std::move(w)) {}
  // Chunks given to put_chunk_copy, kept until end_step (a deque: adding never moves them).
  // Declared first so that the writer, which may still borrow them, is destroyed before them.
  std::deque<std::vector<std::byte>> copies;
  slipstream::StreamWriter writer;
};

struct slipstream_stream_reader {
  explicit slipstream_stream_reader(slipstream::StreamReader r) : reader(std::move(r)) {}
  slipstream::StreamReader reader;
  std::string skip_reason;  // of the last SKIPPED next_step; borrowed by skip_reason()
};

// A step plus what the C API hands out by pointer: extents as int64_t (the C++ API has uint64_t)
// and the pieces loaded so far, whose `owner`s keep their bytes alive until the handle dies.
struct slipstream_stream_step {
  struct Piece {
    std::vector<std::int64_t> offset, extent;
    std::uint32_t source_rank = 0;
  };
  struct Component {
    std::vector<std::int64_t> global_extent;
    std::vector<Piece> pieces;  // this reader's share, parallel to StreamComponent::mine
    std::optional<std::vector<slipstream::StreamPiece>> loaded;
  };

  explicit slipstream_stream_step(slipstream::StreamStep s) : step(std::move(s)) {
    for (const slipstream::StreamComponent& c : step.components()) {
      Component component;
      component.global_extent = signed_extent(c.global_extent);
      for (const slipstream::stream::Chunk& piece : c.mine) {
        component.pieces.push_back(
            {signed_extent(piece.offset), signed_extent(piece.extent), piece.source_rank});
      }
      components.push_back(std::move(component));
    }
  }

  static std::vector<std::int64_t> signed_extent(const std::vector<std::uint64_t>& values) {
    return {values.begin(), values.end()};
  }

  slipstream::StreamStep step;
  std::vector<Component> components;  // parallel to step.components()
};

namespace {

// ---- Argument conversions --------------------------------------------------------------------

std::int64_t non_negative(std::int64_t value, const char* what) {
  if (value < 0) {
    throw InvalidArgumentError(std::string(what) + " is " + std::to_string(value) +
                               "; expected a value >= 0");
  }
  return value;
}

slipstream::StreamWriterOptions writer_options_arg(
    const slipstream_stream_writer_options_t* options) {
  slipstream::StreamWriterOptions cpp;
  if (options == nullptr) return cpp;
  if (options->queue_limit < 1) {
    throw InvalidArgumentError("queue_limit is " + std::to_string(options->queue_limit) +
                               "; expected at least 1 (slipstream_stream_writer_options_init "
                               "sets the default, 2)");
  }
  cpp.queue_limit = static_cast<std::size_t>(options->queue_limit);
  const std::int64_t groups = non_negative(options->expected_groups, "expected_groups");
  if (groups > std::numeric_limits<std::uint32_t>::max()) {
    throw InvalidArgumentError("expected_groups " + std::to_string(groups) + " is too large");
  }
  cpp.expected_groups = static_cast<std::uint32_t>(groups);
  cpp.end_on_writer_failure = options->end_on_writer_failure != 0;
  cpp.step_timeout =
      std::chrono::milliseconds(non_negative(options->step_timeout_ms, "step_timeout_ms"));
  cpp.begin_timeout =
      std::chrono::milliseconds(non_negative(options->begin_timeout_ms, "begin_timeout_ms"));
  cpp.hostname = string_arg(options->hostname, options->hostname_length, "hostname");
  cpp.shared_memory_min_bytes = static_cast<std::size_t>(
      non_negative(options->shared_memory_min_bytes, "shared_memory_min_bytes"));
  cpp.reserve_next_step = options->reserve_next_step != 0;
  cpp.first_step_precious = options->first_step_precious != 0;
  return cpp;
}

slipstream::StreamReaderOptions reader_options_arg(
    const slipstream_stream_reader_options_t* options) {
  using Options = slipstream::StreamReaderOptions;
  Options cpp;
  if (options == nullptr) return cpp;
  switch (options->policy) {
    case SLIPSTREAM_STREAM_BLOCK:
      cpp.policy = Options::Policy::kBlock;
      break;
    case SLIPSTREAM_STREAM_DISCARD:
      cpp.policy = Options::Policy::kDiscard;
      break;
    default:
      throw InvalidArgumentError("policy " + std::to_string(options->policy) +
                                 " is neither SLIPSTREAM_STREAM_BLOCK (0) nor "
                                 "SLIPSTREAM_STREAM_DISCARD (1)");
  }
  switch (options->start) {
    case SLIPSTREAM_STREAM_OLDEST:
      cpp.start = Options::Start::kOldest;
      break;
    case SLIPSTREAM_STREAM_NEWEST:
      cpp.start = Options::Start::kNewest;
      break;
    default:
      throw InvalidArgumentError("start " + std::to_string(options->start) +
                                 " is neither SLIPSTREAM_STREAM_OLDEST (0) nor "
                                 "SLIPSTREAM_STREAM_NEWEST (1)");
  }
  const std::string_view strategy =
      string_arg(options->strategy, options->strategy_length, "strategy");
  if (!strategy.empty()) cpp.strategy = strategy;
  cpp.strategy_options.split_dimension =
      static_cast<std::size_t>(non_negative(options->split_dimension, "split_dimension"));
  cpp.strategy_options.no_empty_readers = options->no_empty_readers != 0;
  cpp.next_timeout =
      std::chrono::milliseconds(non_negative(options->next_timeout_ms, "next_timeout_ms"));
  cpp.hostname = string_arg(options->hostname, options->hostname_length, "hostname");
  switch (options->step_distribution) {
    case SLIPSTREAM_STREAM_DISTRIBUTE_ALL:
      cpp.step_distribution = slipstream::StepDistribution::kAll;
      break;
    case SLIPSTREAM_STREAM_DISTRIBUTE_ROUND_ROBIN:
      cpp.step_distribution = slipstream::StepDistribution::kRoundRobin;
      break;
    case SLIPSTREAM_STREAM_DISTRIBUTE_ON_DEMAND:
      cpp.step_distribution = slipstream::StepDistribution::kOnDemand;
      break;
    default:
      throw InvalidArgumentError("step_distribution " + std::to_string(options->step_distribution) +
                                 " is none of SLIPSTREAM_STREAM_DISTRIBUTE_ALL (0), _ROUND_ROBIN "
                                 "(1) and _ON_DEMAND (2)");
  }
  return cpp;
}

// `count` row-major extents of a chunk as the C++ API takes them; `what` names the argument.
std::vector<std::uint64_t> extent_arg(const std::int64_t* values, std::size_t count,
                                      const char* what) {
  if (values == nullptr) throw InvalidArgumentError(std::string(what) + " is NULL");
  std::vector<std::uint64_t> out;
  out.reserve(count);
  for (std::size_t d = 0; d < count; ++d) {
    if (values[d] < 0) {
      throw InvalidArgumentError(std::string(what) + "[" + std::to_string(d) + "] is " +
                                 std::to_string(values[d]) + "; expected a value >= 0");
    }
    out.push_back(static_cast<std::uint64_t>(values[d]));
  }
  return out;
}

bool stream_level(slipstream_attribute_level_t level) {
  if (level == SLIPSTREAM_STEP_ATTRIBUTE) return false;
  if (level == SLIPSTREAM_STREAM_ATTRIBUTE) return true;
  throw InvalidArgumentError("attribute level " + std::to_string(level) +
                             " is neither SLIPSTREAM_STEP_ATTRIBUTE (0) nor "
                             "SLIPSTREAM_STREAM_ATTRIBUTE (1)");
}

slipstream::StreamWriter& writer_of(slipstream_stream_writer_t* writer) {
  return deref(writer, "stream writer handle").writer;
}

// put_chunk and put_chunk_copy: the chunk is borrowed, or copied into the writer handle.
slipstream_status_t put_chunk(slipstream_stream_writer_t* writer, const char* component,
                              std::size_t component_length, slipstream_dtype_t dtype,
                              std::size_t ndims, const std::int64_t* global_extent,
                              const std::int64_t* offset, const std::int64_t* extent,
                              const void* data, std::size_t bytes, bool copy) {
  return guarded([&] {
    slipstream_stream_writer& w = deref(writer, "stream writer handle");
    if (ndims == 0) throw InvalidArgumentError("put_chunk: ndims is 0; expected at least 1");
    const std::vector<std::uint64_t> global = extent_arg(global_extent, ndims, "global_extent");
    const std::vector<std::uint64_t> box_offset = extent_arg(offset, ndims, "offset");
    const std::vector<std::uint64_t> box_extent = extent_arg(extent, ndims, "extent");
    if (data == nullptr && bytes != 0) {
      throw InvalidArgumentError("put_chunk: data is NULL but bytes is " + std::to_string(bytes));
    }
    const void* chunk = data;
    if (copy && bytes > 0) {
      auto& kept = w.copies.emplace_back(bytes);
      std::memcpy(kept.data(), data, bytes);
      chunk = kept.data();
    }
    try {
      w.writer.put_chunk(string_arg(component, component_length, "component"), dtype_arg(dtype),
                         global, box_offset, box_extent, chunk, bytes);
    } catch (...) {
      if (copy && bytes > 0) w.copies.pop_back();
      throw;
    }
  });
}

// Sets the attribute `make_value()` (which converts and checks the C value) at `level`.
template <typename MakeValue>
slipstream_status_t set_attribute(slipstream_stream_writer_t* writer,
                                  slipstream_attribute_level_t level, const char* path,
                                  std::size_t path_length, const char* name,
                                  std::size_t name_length, MakeValue make_value) {
  return guarded([&] {
    slipstream::StreamWriter& w = writer_of(writer);
    const bool whole_stream = stream_level(level);
    const std::string_view path_text = string_arg(path, path_length, "path");
    const std::string_view name_text = string_arg(name, name_length, "name");
    if (whole_stream) {
      w.set_stream_attribute(path_text, name_text, make_value());
    } else {
      w.set_attribute(path_text, name_text, make_value());
    }
  });
}

// ---- Steps -------------------------------------------------------------------------------------

const slipstream_stream_step& step_of(const slipstream_stream_step_t* step) {
  return deref(step, "stream step handle");
}

std::size_t component_index(const slipstream_stream_step& step, std::size_t component) {
  if (component >= step.components.size()) {
    throw InvalidArgumentError("component " + std::to_string(component) +
                               " is out of range (step " + std::to_string(step.step.number()) +
                               " has " + std::to_string(step.components.size()) + " components)");
  }
  return component;
}

const slipstream_stream_step::Piece& piece_of(const slipstream_stream_step& step,
                                              std::size_t component, std::size_t piece) {
  const auto& pieces = step.components[component_index(step, component)].pieces;
  if (piece >= pieces.size()) {
    throw InvalidArgumentError("piece " + std::to_string(piece) + " of component '" +
                               step.step.components()[component].name + "' is out of range (" +
                               std::to_string(pieces.size()) + " pieces)");
  }
  return pieces[piece];
}

void load(slipstream_stream_step& step, std::size_t component) {
  auto& entry = step.components[component_index(step, component)];
  if (entry.loaded) return;
  const std::string& name = step.step.components()[component].name;
  std::vector<slipstream::StreamPiece> pieces = step.step.load(name);
  if (pieces.size() != entry.pieces.size()) {
    throw slipstream::ProtocolError("load of '" + name + "' gave " + std::to_string(pieces.size()) +
                                    " pieces, expected " + std::to_string(entry.pieces.size()));
  }
  entry.loaded = std::move(pieces);
}

// The attribute types are the alternatives of AttributeValue, in order.
static_assert(std::is_same_v<
              std::variant_alternative_t<SLIPSTREAM_ATTRIBUTE_INT64S, slipstream::AttributeVariant>,
              std::vector<std::int64_t>>);
static_assert(std::variant_size_v<slipstream::AttributeVariant> == SLIPSTREAM_ATTRIBUTE_DOUBLES + 1);

const char* type_name(std::size_t index) {
  static const char* const kNames[] = {"string",       "int64",       "double",
                                       "string array", "int64 array", "double array"};
  return index < std::size(kNames) ? kNames[index] : "unknown";
}

// The attribute of the step (or of the stream) called path/name; the last one set wins.
const slipstream::AttributeValue& find_attribute(const slipstream_stream_step_t* handle,
                                                 slipstream_attribute_level_t level,
                                                 const char* path, std::size_t path_length,
                                                 const char* name, std::size_t name_length) {
  const slipstream_stream_step& step = step_of(handle);
  const std::int64_t wanted_step = stream_level(level) ? -1 : step.step.number();
  const std::string_view path_text = string_arg(path, path_length, "path");
  const std::string_view name_text = string_arg(name, name_length, "name");
  const auto& attributes = step.step.attributes();
  for (auto it = attributes.rbegin(); it != attributes.rend(); ++it) {
    if (it->step == wanted_step && it->path == path_text && it->name == name_text) {
      return it->value;
    }
  }
  throw slipstream::KeyNotFoundError(std::string(wanted_step < 0 ? "stream" : "step") +
                                     " attribute '" + std::string(name_text) + "' of path '" +
                                     std::string(path_text) + "' not found in step " +
                                     std::to_string(step.step.number()));
}

// The value of an attribute as T; WRONG_TYPE naming both types otherwise.
template <typename T>
const T& attribute_as(const slipstream_stream_step_t* handle, slipstream_attribute_level_t level,
                      const char* path, std::size_t path_length, const char* name,
                      std::size_t name_length, const char* wanted) {
  const slipstream::AttributeValue& value =
      find_attribute(handle, level, path, path_length, name, name_length);
  if (const T* typed = std::get_if<T>(&value)) return *typed;
  const std::string message = "attribute '" + std::string(string_arg(name, name_length, "name")) +
                              "' is a " + type_name(value.index()) + ", not a " + wanted;
  throw slipstream::WrongTypeError(message, message);
}

}  // namespace

extern "C" {

// ---- Writers -----------------------------------------------------------------------------------

slipstream_status_t slipstream_stream_writer_options_init(
    slipstream_stream_writer_options_t* options) {
  return guarded([&] {
    deref(options, "options") = slipstream_stream_writer_options_t{};
    const slipstream::StreamWriterOptions defaults;
    options->queue_limit = static_cast<std::int64_t>(defaults.queue_limit);
    options->shared_memory_min_bytes = static_cast<std::int64_t>(defaults.shared_memory_min_bytes);
    options->reserve_next_step = defaults.reserve_next_step ? 1 : 0;
  });
}

slipstream_status_t slipstream_stream_writer_create(
    const slipstream_client_options_t* client_options, const char* stream, size_t stream_length,
    uint32_t rank, uint32_t writers, const slipstream_stream_writer_options_t* options,
    slipstream_stream_writer_t** writer) {
  return guarded([&] {
    deref(writer, "writer output pointer");
    slipstream::StreamWriter cpp(client_options_arg(client_options),
                                 string_arg(stream, stream_length, "stream"), rank, writers,
                                 writer_options_arg(options));
    *writer = std::make_unique<slipstream_stream_writer>(std::move(cpp)).release();
  });
}

slipstream_status_t slipstream_stream_writer_destroy(slipstream_stream_writer_t** writer) {
  return guarded([&] {
    if (writer == nullptr) return;
    delete *writer;  // ~StreamWriter closes, reporting nothing
    *writer = nullptr;
  });
}

slipstream_status_t slipstream_stream_set_operator(slipstream_stream_writer_t* writer,
                                                   const char* component, size_t component_length,
                                                   const char* type, size_t type_length,
                                                   const char* parameters,
                                                   size_t parameters_length) {
  return guarded([&] {
    const std::string_view name = string_arg(component, component_length, "component");
    if (type == nullptr || type_length == 0) {
      writer_of(writer).set_operator(name, std::nullopt);
      return;
    }
    writer_of(writer).set_operator(
        name, operator_arg(type, type_length, parameters, parameters_length,
                           "operator of '" + std::string(name) + "'"));
  });
}

slipstream_status_t slipstream_stream_begin_step(slipstream_stream_writer_t* writer, int64_t step) {
  return guarded([&] { writer_of(writer).begin_step(step); });
}

slipstream_status_t slipstream_stream_put_chunk(slipstream_stream_writer_t* writer,
                                                const char* component, size_t component_length,
                                                slipstream_dtype_t dtype, size_t ndims,
                                                const int64_t* global_extent, const int64_t* offset,
                                                const int64_t* extent, const void* data,
                                                size_t bytes) {
  return put_chunk(writer, component, component_length, dtype, ndims, global_extent, offset, extent,
                   data, bytes, false);
}

slipstream_status_t slipstream_stream_put_chunk_copy(slipstream_stream_writer_t* writer,
                                                     const char* component, size_t component_length,
                                                     slipstream_dtype_t dtype, size_t ndims,
                                                     const int64_t* global_extent,
                                                     const int64_t* offset, const int64_t* extent,
                                                     const void* data, size_t bytes) {
  return put_chunk(writer, component, component_length, dtype, ndims, global_extent, offset, extent,
                   data, bytes, true);
}

slipstream_status_t slipstream_stream_set_attribute_string(slipstream_stream_writer_t* writer,
                                                           slipstream_attribute_level_t level,
                                                           const char* path, size_t path_length,
                                                           const char* name, size_t name_length,
                                                           const char* value, size_t value_length) {
  return set_attribute(writer, level, path, path_length, name, name_length, [&] {
    return slipstream::AttributeValue(std::string(string_arg(value, value_length, "value")));
  });
}

slipstream_status_t slipstream_stream_set_attribute_int64(slipstream_stream_writer_t* writer,
                                                          slipstream_attribute_level_t level,
                                                          const char* path, size_t path_length,
                                                          const char* name, size_t name_length,
                                                          int64_t value) {
  return set_attribute(writer, level, path, path_length, name, name_length,
                       [&] { return slipstream::AttributeValue(std::int64_t{value}); });
}

slipstream_status_t slipstream_stream_set_attribute_double(slipstream_stream_writer_t* writer,
                                                           slipstream_attribute_level_t level,
                                                           const char* path, size_t path_length,
                                                           const char* name, size_t name_length,
                                                           double value) {
  return set_attribute(writer, level, path, path_length, name, name_length,
                       [&] { return slipstream::AttributeValue(value); });
}

slipstream_status_t slipstream_stream_set_attribute_strings(
    slipstream_stream_writer_t* writer, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, const char* const* values,
    const size_t* value_lengths, size_t count) {
  return set_attribute(writer, level, path, path_length, name, name_length, [&] {
    return slipstream::AttributeValue(string_list_arg(values, value_lengths, count, "values"));
  });
}

slipstream_status_t slipstream_stream_set_attribute_int64s(slipstream_stream_writer_t* writer,
                                                           slipstream_attribute_level_t level,
                                                           const char* path, size_t path_length,
                                                           const char* name, size_t name_length,
                                                           const int64_t* values, size_t count) {
  return set_attribute(writer, level, path, path_length, name, name_length, [&] {
    if (values == nullptr && count != 0) throw InvalidArgumentError("values is NULL");
    return slipstream::AttributeValue(std::vector<std::int64_t>(values, values + count));
  });
}

slipstream_status_t slipstream_stream_set_attribute_doubles(slipstream_stream_writer_t* writer,
                                                            slipstream_attribute_level_t level,
                                                            const char* path, size_t path_length,
                                                            const char* name, size_t name_length,
                                                            const double* values, size_t count) {
  return set_attribute(writer, level, path, path_length, name, name_length, [&] {
    if (values == nullptr && count != 0) throw InvalidArgumentError("values is NULL");
    return slipstream::AttributeValue(std::vector<double>(values, values + count));
  });
}

slipstream_status_t slipstream_stream_end_step(slipstream_stream_writer_t* writer) {
  bool published = true;
  std::string reason;
  const slipstream_status_t status = guarded([&] {
    slipstream_stream_writer& w = deref(writer, "stream writer handle");
    try {
      published = w.writer.end_step();
    } catch (...) {
      w.copies.clear();  // sent or dropped: either way the step's chunks are no longer needed
      throw;
    }
    w.copies.clear();
    if (!published) reason = w.writer.last_abort_reason();
  });
  if (status == SLIPSTREAM_OK && !published) return fail(SLIPSTREAM_STEP_ABORTED, reason.c_str());
  return status;
}

slipstream_status_t slipstream_stream_writer_close(slipstream_stream_writer_t* writer) {
  return guarded([&] { writer_of(writer).close(); });
}

// ---- Readers -----------------------------------------------------------------------------------

slipstream_status_t slipstream_stream_reader_options_init(
    slipstream_stream_reader_options_t* options) {
  return guarded([&] { deref(options, "options") = slipstream_stream_reader_options_t{}; });
}

slipstream_status_t slipstream_stream_reader_create(
    const slipstream_client_options_t* client_options, const char* stream, size_t stream_length,
    const char* group, size_t group_length, uint32_t rank, uint32_t size,
    const slipstream_stream_reader_options_t* options, slipstream_stream_reader_t** reader) {
  return guarded([&] {
    deref(reader, "reader output pointer");
    slipstream::StreamReader cpp(
        client_options_arg(client_options), string_arg(stream, stream_length, "stream"),
        string_arg(group, group_length, "group"), rank, size, reader_options_arg(options));
    *reader = std::make_unique<slipstream_stream_reader>(std::move(cpp)).release();
  });
}

slipstream_status_t slipstream_stream_reader_destroy(slipstream_stream_reader_t** reader) {
  return guarded([&] {
    if (reader == nullptr) return;
    delete *reader;  // ~StreamReader leaves the group
    *reader = nullptr;
  });
}

slipstream_status_t slipstream_stream_next_step(slipstream_stream_reader_t* reader,
                                                slipstream_stream_next_kind_t* kind,
                                                int64_t* step_number,
                                                slipstream_stream_step_t** step) {
  return guarded([&] {
    slipstream_stream_reader& r = deref(reader, "stream reader handle");
    deref(kind, "kind output pointer");
    deref(step, "step output pointer");
    r.skip_reason.clear();
    slipstream::StreamNext next = [&] {
      try {
        return r.reader.next_step();
      } catch (const slipstream::stream::StrategyError& e) {
        // The group's strategy cannot share this step (bad options, or the `fail` fallback).
        throw InvalidArgumentError(std::string("next_step: ") + e.what());
      }
    }();
    std::unique_ptr<slipstream_stream_step> handle;
    std::int64_t number = -1;
    switch (next.kind) {
      case slipstream::StreamNext::Kind::kStep:
        handle = std::make_unique<slipstream_stream_step>(std::move(*next.step));
        number = handle->step.number();
        *kind = SLIPSTREAM_STREAM_STEP;
        break;
      case slipstream::StreamNext::Kind::kSkipped:
        r.skip_reason = std::move(next.reason);
        number = next.skipped_step;
        *kind = SLIPSTREAM_STREAM_SKIPPED;
        break;
      case slipstream::StreamNext::Kind::kEnd:
        *kind = SLIPSTREAM_STREAM_END;
        break;
      case slipstream::StreamNext::Kind::kTimeout:
        *kind = SLIPSTREAM_STREAM_TIMEOUT;
        break;
    }
    if (step_number != nullptr) *step_number = number;
    *step = handle.release();
  });
}

slipstream_status_t slipstream_stream_reader_skip_reason(const slipstream_stream_reader_t* reader,
                                                         const char** reason, size_t* length) {
  return guarded([&] {
    const std::string& text = deref(reader, "stream reader handle").skip_reason;
    deref(reason, "reason output pointer") = text.c_str();
    if (length != nullptr) *length = text.size();
  });
}

// ---- Steps -------------------------------------------------------------------------------------

slipstream_status_t slipstream_stream_step_destroy(slipstream_stream_step_t** step) {
  return guarded([&] {
    if (step == nullptr) return;
    delete *step;  // ~StreamStep gives a held step back (now or with the next request)
    *step = nullptr;
  });
}

slipstream_status_t slipstream_stream_step_release(slipstream_stream_step_t* step) {
  return guarded([&] { deref(step, "stream step handle").step.release(); });
}

slipstream_status_t slipstream_stream_step_number(const slipstream_stream_step_t* step,
                                                  int64_t* number) {
  return guarded([&] { deref(number, "number output pointer") = step_of(step).step.number(); });
}

slipstream_status_t slipstream_stream_step_readers(const slipstream_stream_step_t* step,
                                                   size_t* reader_count, size_t* index) {
  return guarded([&] {
    const slipstream::StreamStep& s = step_of(step).step;
    if (reader_count != nullptr) *reader_count = s.readers().size();
    if (index != nullptr) *index = s.index();
  });
}

slipstream_status_t slipstream_stream_step_component_count(const slipstream_stream_step_t* step,
                                                           size_t* count) {
  return guarded([&] { deref(count, "count output pointer") = step_of(step).components.size(); });
}

slipstream_status_t slipstream_stream_step_find_component(const slipstream_stream_step_t* step,
                                                          const char* name, size_t name_length,
                                                          size_t* component) {
  return guarded([&] {
    const slipstream_stream_step& s = step_of(step);
    deref(component, "component output pointer");
    const std::string_view wanted = string_arg(name, name_length, "name");
    const auto& components = s.step.components();
    for (std::size_t i = 0; i < components.size(); ++i) {
      if (components[i].name == wanted) {
        *component = i;
        return;
      }
    }
    throw slipstream::KeyNotFoundError("step " + std::to_string(s.step.number()) +
                                       " has no component '" + std::string(wanted) + "'");
  });
}

slipstream_status_t slipstream_stream_step_component(const slipstream_stream_step_t* step,
                                                     size_t component, const char** name,
                                                     size_t* name_length, slipstream_dtype_t* dtype,
                                                     size_t* ndims, const int64_t** global_extent,
                                                     size_t* piece_count) {
  return guarded([&] {
    const slipstream_stream_step& s = step_of(step);
    const std::size_t i = component_index(s, component);
    const slipstream::StreamComponent& c = s.step.components()[i];
    if (name != nullptr) *name = c.name.c_str();
    if (name_length != nullptr) *name_length = c.name.size();
    if (dtype != nullptr) *dtype = static_cast<slipstream_dtype_t>(c.dtype);
    if (ndims != nullptr) *ndims = s.components[i].global_extent.size();
    if (global_extent != nullptr) *global_extent = s.components[i].global_extent.data();
    if (piece_count != nullptr) *piece_count = s.components[i].pieces.size();
  });
}

slipstream_status_t slipstream_stream_step_piece(const slipstream_stream_step_t* step,
                                                 size_t component, size_t piece,
                                                 const int64_t** offset, const int64_t** extent,
                                                 uint32_t* source_rank) {
  return guarded([&] {
    const slipstream_stream_step::Piece& p = piece_of(step_of(step), component, piece);
    if (offset != nullptr) *offset = p.offset.data();
    if (extent != nullptr) *extent = p.extent.data();
    if (source_rank != nullptr) *source_rank = p.source_rank;
  });
}

slipstream_status_t slipstream_stream_step_load(slipstream_stream_step_t* step, size_t component) {
  return guarded([&] { load(deref(step, "stream step handle"), component); });
}

slipstream_status_t slipstream_stream_step_piece_data(slipstream_stream_step_t* step,
                                                      size_t component, size_t piece,
                                                      slipstream_dtype_t dtype,
                                                      size_t expected_ndims, const void** data,
                                                      size_t* bytes) {
  return guarded([&] {
    slipstream_stream_step& s = deref(step, "stream step handle");
    deref(data, "data output pointer");
    piece_of(s, component, piece);  // range checks before any fetch
    const slipstream::StreamComponent& c = s.step.components()[component];
    const slipstream::DType wanted = dtype_arg(dtype);
    if (wanted != c.dtype) {
      throw InvalidArgumentError("component '" + c.name + "' holds " +
                                 std::string(slipstream::dtype_name(c.dtype)) + ", not " +
                                 std::string(slipstream::dtype_name(wanted)));
    }
    if (expected_ndims > 0 && expected_ndims != c.global_extent.size()) {
      throw InvalidArgumentError("component '" + c.name + "' has " +
                                 std::to_string(c.global_extent.size()) + " dimensions, not " +
                                 std::to_string(expected_ndims));
    }
    load(s, component);
    const slipstream::StreamPiece& p = (*s.components[component].loaded)[piece];
    *data = p.bytes.empty() ? nullptr : static_cast<const void*>(p.bytes.data());
    if (bytes != nullptr) *bytes = p.bytes.size();
  });
}

slipstream_status_t slipstream_stream_step_attribute_info(const slipstream_stream_step_t* step,
                                                          slipstream_attribute_level_t level,
                                                          const char* path, size_t path_length,
                                                          const char* name, size_t name_length,
                                                          slipstream_attribute_type_t* type,
                                                          size_t* count) {
  return guarded([&] {
    const slipstream::AttributeValue& value =
        find_attribute(step, level, path, path_length, name, name_length);
    if (type != nullptr) *type = static_cast<slipstream_attribute_type_t>(value.index());
    if (count != nullptr) {
      *count = std::visit(
          [](const auto& v) -> std::size_t {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string> || std::is_arithmetic_v<T>) {
              return 1;
            } else {
              return v.size();
            }
          },
          value);
    }
  });
}

slipstream_status_t slipstream_stream_step_attribute_string(const slipstream_stream_step_t* step,
                                                            slipstream_attribute_level_t level,
                                                            const char* path, size_t path_length,
                                                            const char* name, size_t name_length,
                                                            const char** value, size_t* length) {
  return guarded([&] {
    deref(value, "value output pointer");
    const auto& text =
        attribute_as<std::string>(step, level, path, path_length, name, name_length, "string");
    *value = text.c_str();
    if (length != nullptr) *length = text.size();
  });
}

slipstream_status_t slipstream_stream_step_attribute_int64(const slipstream_stream_step_t* step,
                                                           slipstream_attribute_level_t level,
                                                           const char* path, size_t path_length,
                                                           const char* name, size_t name_length,
                                                           int64_t* value) {
  return guarded([&] {
    deref(value, "value output pointer");
    *value = attribute_as<std::int64_t>(step, level, path, path_length, name, name_length, "int64");
  });
}

slipstream_status_t slipstream_stream_step_attribute_double(const slipstream_stream_step_t* step,
                                                            slipstream_attribute_level_t level,
                                                            const char* path, size_t path_length,
                                                            const char* name, size_t name_length,
                                                            double* value) {
  return guarded([&] {
    deref(value, "value output pointer");
    *value = attribute_as<double>(step, level, path, path_length, name, name_length, "double");
  });
}

slipstream_status_t slipstream_stream_step_attribute_strings_element(
    const slipstream_stream_step_t* step, slipstream_attribute_level_t level, const char* path,
    size_t path_length, const char* name, size_t name_length, size_t index, const char** value,
    size_t* length) {
  return guarded([&] {
    deref(value, "value output pointer");
    const auto& strings = attribute_as<std::vector<std::string>>(step, level, path, path_length,
                                                                 name, name_length, "string array");
    if (index >= strings.size()) {
      throw InvalidArgumentError("index " + std::to_string(index) +
                                 " is out of range (the array "
                                 "has " +
                                 std::to_string(strings.size()) + " strings)");
    }
    *value = strings[index].c_str();
    if (length != nullptr) *length = strings[index].size();
  });
}

slipstream_status_t slipstream_stream_step_attribute_int64s(const slipstream_stream_step_t* step,
                                                            slipstream_attribute_level_t level,
                                                            const char* path, size_t path_length,
                                                            const char* name, size_t name_length,
                                                            const int64_t** values, size_t* count) {
  return guarded([&] {
    deref(values, "values output pointer");
    const auto& array = attribute_as<std::vector<std::int64_t>>(step, level, path, path_length,
                                                                name, name_length, "int64 array");
    *values = array.data();
    if (count != nullptr) *count = array.size();
  });
}

slipstream_status_t slipstream_stream_step_attribute_doubles(const slipstream_stream_step_t* step,
                                                             slipstream_attribute_level_t level,
                                                             const char* path, size_t path_length,
                                                             const char* name, size_t name_length,
                                                             const double** values, size_t* count) {
  return guarded([&] {
    deref(values, "values output pointer");
    const auto& array = attribute_as<std::vector<double>>(step, level, path, path_length, name,
                                                          name_length, "double array");
    *values = array.data();
    if (count != nullptr) *count = array.size();
  });
}

}  // extern "C"

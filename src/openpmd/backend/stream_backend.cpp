// The stream backend: a series on a Slipstream stream. Writing, an iteration is a step of one
// writer rank (StreamWriter); reading, one reader of a group (StreamReader) takes the steps in
// order, and loads any box of any component of the step it holds in one round trip per flush.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "openPMD/Error.hpp"
#include "openpmd/backend/backend.hpp"
#include "openpmd/config.hpp"
#include "openpmd/dataset_types.hpp"
#include "slipstream/error.hpp"
#include "slipstream/stream.hpp"

namespace openPMD::internal {
namespace {

constexpr const char* kName = "SLIPSTREAM";

slipstream::DType to_dtype(Datatype dtype, const std::string& path) {
  using slipstream::DType;
  switch (dtype) {
    case Datatype::FLOAT: return DType::kFloat32;
    case Datatype::DOUBLE: return DType::kFloat64;
    case Datatype::CHAR:
    case Datatype::SCHAR: return DType::kInt8;
    case Datatype::UCHAR: return DType::kUInt8;
    case Datatype::SHORT: return DType::kInt16;
    case Datatype::USHORT: return DType::kUInt16;
    case Datatype::INT: return DType::kInt32;
    case Datatype::LONG:
    case Datatype::LONGLONG: return DType::kInt64;
    case Datatype::UINT: return DType::kUInt32;
    case Datatype::ULONG:
    case Datatype::ULONGLONG: return DType::kUInt64;
    case Datatype::BOOL: return DType::kBool;
    default:
      throw error::OperationUnsupportedInBackend(
          kName, "'" + path + "' is " + datatypeToString(dtype) +
                     ", which a stream cannot carry (it carries FLOAT, DOUBLE, BOOL and every "
                     "integer type, signed and unsigned, not complex or long double datasets)");
  }
}

Datatype from_dtype(slipstream::DType dtype) {
  using slipstream::DType;
  switch (dtype) {
    case DType::kFloat32: return Datatype::FLOAT;
    case DType::kFloat64: return Datatype::DOUBLE;
    case DType::kInt8: return Datatype::SCHAR;
    case DType::kInt16: return Datatype::SHORT;
    case DType::kInt32: return Datatype::INT;
    case DType::kInt64: return Datatype::LONG;
    case DType::kUInt8: return Datatype::UCHAR;
    case DType::kUInt16: return Datatype::USHORT;
    case DType::kBool: return Datatype::BOOL;
    case DType::kUInt32: return Datatype::UINT;
    case DType::kUInt64: return Datatype::ULONG;
  }
  return Datatype::UNDEFINED;
}

// A stream attribute holds strings, 64-bit integers and doubles, and arrays of them, with the
// writer's own element type beside them (LONG, DOUBLE and strings need none): the reader gets
// back the exact type.
struct StreamValue {
  slipstream::AttributeValue value;
  std::string element;
};

// `path` and `name` name the attribute in the error (built only then: this runs for every
// attribute of every step).
StreamValue to_stream(const Attribute& attribute, std::string_view path, std::string_view name) {
  const Datatype basic = basicDatatype(attribute.dtype);
  const std::string element =
      attribute.dtype == Datatype::ARR_DBL_7                                   ? "ARR_DBL_7"
      : basic == Datatype::LONG || basic == Datatype::DOUBLE || basic == Datatype::STRING ? ""
                                                                   : datatypeToString(basic);
  return std::visit(
      [&](const auto& value) -> StreamValue {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string> ||
                      std::is_same_v<T, std::vector<std::string>>) {
          return {value, ""};
        } else if constexpr (std::is_same_v<T, std::array<double, 7>>) {
          return {std::vector<double>(value.begin(), value.end()), element};
        } else if constexpr (std::is_integral_v<T>) {
          return {static_cast<std::int64_t>(value), element};
        } else if constexpr (std::is_floating_point_v<T>) {
          return {static_cast<double>(value), element};
        } else if constexpr (std::is_same_v<T, std::vector<char>> ||
                             std::is_same_v<T, std::vector<signed char>> ||
                             std::is_same_v<T, std::vector<unsigned char>> ||
                             std::is_same_v<T, std::vector<short>> ||
                             std::is_same_v<T, std::vector<unsigned short>> ||
                             std::is_same_v<T, std::vector<int>> ||
                             std::is_same_v<T, std::vector<unsigned int>> ||
                             std::is_same_v<T, std::vector<long>> ||
                             std::is_same_v<T, std::vector<unsigned long>> ||
                             std::is_same_v<T, std::vector<long long>> ||
                             std::is_same_v<T, std::vector<unsigned long long>>) {
          std::vector<std::int64_t> out;
          for (auto v : value) out.push_back(static_cast<std::int64_t>(v));
          return {std::move(out), element};
        } else if constexpr (std::is_same_v<T, std::vector<float>> ||
                             std::is_same_v<T, std::vector<double>> ||
                             std::is_same_v<T, std::vector<long double>>) {
          return {std::vector<double>(value.begin(), value.end()), element};
        } else {
          throw error::OperationUnsupportedInBackend(
              kName, "attribute '" + std::string(path) + "@" + std::string(name) + "' is " +
                         datatypeToString(attribute.dtype) +
                         ", which a stream cannot carry (complex attributes)");
        }
      },
      attribute.getResource());
}

// The value as the wire types say (no element type given).
Attribute plain_attribute(const slipstream::AttributeValue& value) {
  return std::visit(
      [](const auto& held) -> Attribute {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          return Attribute(static_cast<long>(held));
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          return Attribute(std::vector<long>(held.begin(), held.end()));
        } else {
          return Attribute(held);
        }
      },
      value);
}

// The value in the element type its writer declared.
Attribute from_stream(const slipstream::AttributeValue& value, const std::string& element) {
  if (element.empty()) return plain_attribute(value);
  if (element == "ARR_DBL_7") {
    const auto* doubles = std::get_if<std::vector<double>>(&value);
    if (doubles && doubles->size() == 7) {
      std::array<double, 7> out{};
      std::copy(doubles->begin(), doubles->end(), out.begin());
      return Attribute(out);
    }
    return plain_attribute(value);
  }
  Datatype dtype = Datatype::UNDEFINED;
  try {
    dtype = stringToDatatype(element);
  } catch (const std::invalid_argument&) {
    return plain_attribute(value);  // a type this layer does not know: as the wire says
  }
  return with_dataset_type(dtype, "attribute", [&](auto* tag) -> Attribute {
    using T = std::remove_pointer_t<decltype(tag)>;
    if constexpr (std::is_arithmetic_v<T>) {
      return std::visit(
          [](const auto& held) -> Attribute {
            using H = std::decay_t<decltype(held)>;
            if constexpr (std::is_same_v<H, std::int64_t> || std::is_same_v<H, double>) {
              return Attribute(static_cast<T>(held));
            } else if constexpr ((std::is_same_v<H, std::vector<std::int64_t>> ||
                                  std::is_same_v<H, std::vector<double>>) &&
                                 !std::is_same_v<T, bool>) {
              std::vector<T> out;
              for (auto v : held) out.push_back(static_cast<T>(v));
              return Attribute(std::move(out));
            } else {
              return plain_attribute(held);
            }
          },
          value);
    } else {
      return plain_attribute(value);
    }
  });
}

slipstream::StreamOperator to_stream_operator(const DatasetOperator& op) {
  return slipstream::StreamOperator{op.type, op.parameters};
}

class StreamBackend final : public Backend {
 public:
  StreamBackend(const BackendTarget& target, const SeriesConfig& config) : target_(target) {
    slipstream::ClientOptions client;
    client.address = config.address;
    const auto rank = static_cast<std::uint32_t>(target.rank);
    const auto size = static_cast<std::uint32_t>(target.size);
    if (target.access == Access::READ_WRITE || target.access == Access::APPEND) {
      throw error::OperationUnsupportedInBackend(
          kName, "series '" + target.path + "': a stream is written (CREATE) or read "
                 "(READ_LINEAR, READ_ONLY), not appended to");
    }
    if (target.encoding == IterationEncoding::fileBased) {
      throw error::WrongAPIUsage("series '" + target.path + "': a stream has no file-based encoding");
    }
    if (target.access == Access::CREATE) {
      slipstream::StreamWriterOptions options;
      if (config.queue_limit) options.queue_limit = *config.queue_limit;
      // SST's RendezvousReaderCount defaults to 1: the writers keep their steps for the first
      // reader group instead of dropping those that no group wants yet.
      options.expected_groups = config.expected_groups ? *config.expected_groups : 1;
      options.first_step_precious = config.first_step_precious.value_or(false);
      if (config.dataset_operator) {
        options.operators["*"] = to_stream_operator(*config.dataset_operator);
      }
      for (const ReductionConfig& r : config.reductions) {
        options.reductions.push_back({r.inputs, r.output, r.function, {}, r.send_inputs});
      }
      try {
        writer_.emplace(client, target.name, rank, size, options);
      } catch (const slipstream::InvalidArgumentError& e) {
        const std::string what = e.what();
        if (!config.reductions.empty() && what.find("reduction") != std::string::npos) {
          throw error::BackendConfigSchema({"slipstream", "reductions"}, what);
        }
        if (!config.dataset_operator) throw;
        throw error::BackendConfigSchema({"adios2", "dataset", "operators"}, what);
      }
    } else {
      slipstream::StreamReaderOptions options;
      if (config.discard && *config.discard) {
        options.policy = slipstream::StreamReaderOptions::Policy::kDiscard;
      }
      if (!config.strategy.empty()) options.strategy = config.strategy;
      if (config.step_distribution == "round_robin") {
        options.step_distribution = slipstream::StepDistribution::kRoundRobin;
      } else if (config.step_distribution == "on_demand") {
        options.step_distribution = slipstream::StepDistribution::kOnDemand;
      }
      // OpenTimeoutSecs bounds the wait for the first step; later waits that time out are
      // simply waited again (next_iteration).
      if (config.open_timeout) options.next_timeout = *config.open_timeout;
      open_timeout_ = config.open_timeout;
      throw_on_aborted_ = config.on_aborted_step == "throw";
      const std::string group = config.group.empty() ? "openpmd" : config.group;
      reader_.emplace(client, target.name, group, rank, size, options);
    }
  }

  ~StreamBackend() override {
    try {
      close();
    } catch (const std::exception& e) {
      std::cerr << "openPMD: closing stream '" << target_.name << "': " << e.what() << "\n";
    }
  }

  std::string name() const override { return kName; }

  void open_iteration(std::uint64_t index) override {
    if (open_ == index) return;
    if (open_) {
      throw error::WrongAPIUsage("series '" + target_.path + "': a stream writes one iteration "
                                 "at a time; close iteration " + std::to_string(*open_) +
                                 " before writing iteration " + std::to_string(index));
    }
    writer().begin_step(static_cast<std::int64_t>(index));
    open_ = index;
  }

  void define_dataset(std::uint64_t, const std::string& path, Datatype dtype,
                      const Extent&) override {
    to_dtype(dtype, path);  // refused now rather than at the first chunk
  }

  void set_operator(const std::string& path, const DatasetOperator& op) override {
    try {
      writer().set_operator(path, to_stream_operator(op));
    } catch (const slipstream::InvalidArgumentError& e) {
      throw error::BackendConfigSchema({"adios2", "dataset", "operators"},
                                       e.what());
    }
  }

  void write_chunks(std::uint64_t, const std::vector<ChunkStore>& chunks,
                    bool until_close) override {
    for (const ChunkStore& chunk : chunks) {
      const slipstream::DType dtype = to_dtype(chunk.dtype, chunk.path);
      std::uint64_t elements = 1;
      for (std::uint64_t size : chunk.extent) elements *= size;
      const std::size_t bytes = static_cast<std::size_t>(elements) * toBytes(chunk.dtype);
      if (until_close) {
        writer().put_chunk(chunk.path, dtype, chunk.global_extent, chunk.offset, chunk.extent,
                           chunk.data, bytes);
      } else {
        // The caller may reuse its buffer once the flush returns: copy into the step's memory.
        std::span<std::byte> region =
            writer().loan_chunk(chunk.path, dtype, chunk.global_extent, chunk.offset, chunk.extent);
        std::memcpy(region.data(), chunk.data, bytes);
      }
    }
  }

  void* loan_chunk(std::uint64_t, const ChunkStore& chunk) override {
    return writer()
        .loan_chunk(chunk.path, to_dtype(chunk.dtype, chunk.path), chunk.global_extent,
                    chunk.offset, chunk.extent)
        .data();
  }

  void write_attributes(std::optional<std::uint64_t> index,
                        const std::vector<AttributeEntry>& attributes) override {
    for (const AttributeEntry& entry : attributes) write_one(index, entry.path, entry.name, entry.value);
  }
  void write_attribute_refs(std::optional<std::uint64_t> index,
                            std::span<const AttributeRef> attributes) override {
    for (const AttributeRef& ref : attributes) write_one(index, ref.path, ref.name, *ref.value);
  }

  void close_iteration(std::uint64_t index) override {
    if (open_ != index) return;
    open_.reset();
    if (!writer().end_step()) {
      std::cerr << "openPMD: stream '" << target_.name << "': iteration " << index
                << " was aborted for every reader: " << writer().last_abort_reason() << "\n";
    }
  }

  std::vector<std::uint64_t> iterations() override {
    throw error::OperationUnsupportedInBackend(
        kName, "series '" + target_.path + "': a stream's iterations are read in order "
               "(readIterations(), snapshots()), not by random access");
  }

  IterationLayout read_iteration(std::uint64_t index) override {
    throw error::OperationUnsupportedInBackend(
        kName, "series '" + target_.path + "': iteration " + std::to_string(index) +
                   " by random access; read a stream with readIterations()");
  }

  std::optional<IterationLayout> next_iteration() override {
    if (!reader_) throw error::WrongAPIUsage("series '" + target_.path + "' is not read");
    step_.reset();
    for (;;) {
      slipstream::StreamNext next = reader_->next_step();
      switch (next.kind) {
        case slipstream::StreamNext::Kind::kEnd:
          return std::nullopt;
        case slipstream::StreamNext::Kind::kTimeout:
          if (first_step_seen_) continue;
          throw error::ReadError(
              error::ReadError::AffectedObject::Group, error::ReadError::Reason::Inaccessible,
              std::string(kName),
              "series '" + target_.path + "': no step arrived within OpenTimeoutSecs (" +
                  std::to_string(open_timeout_ ? open_timeout_->count() / 1000 : 0) +
                  " s): is the writer running, and writing stream '" + target_.name + "'?");
        case slipstream::StreamNext::Kind::kSkipped:
          first_step_seen_ = true;
          if (throw_on_aborted_) {
            throw error::ReadError(error::ReadError::AffectedObject::Group,
                                   error::ReadError::Reason::Inaccessible, std::string(kName),
                                   "series '" + target_.path + "', iteration " +
                                       std::to_string(next.skipped_step) +
                                       " was aborted by its writers: " + next.reason);
          }
          std::cerr << "openPMD: series '" << target_.path << "': iteration "
                    << next.skipped_step << " was aborted by its writers and is skipped: "
                    << next.reason << "\n";
          continue;
        case slipstream::StreamNext::Kind::kStep:
          break;
      }
      step_.emplace(std::move(*next.step));
      first_step_seen_ = true;
      return layout_of(*step_);
    }
  }

  std::vector<AttributeEntry> series_attributes() override { return root_; }
  bool series_attributes_changed() override { return std::exchange(root_changed_, false); }

  void read_chunks(std::uint64_t index, const std::vector<ChunkLoad>& loads) override {
    if (!step_ || step_->number() != static_cast<std::int64_t>(index)) {
      throw error::WrongAPIUsage("series '" + target_.path + "': iteration " +
                                 std::to_string(index) + " is no longer held (a stream keeps "
                                 "only the step being read)");
    }
    std::vector<slipstream::StreamBox> boxes;
    boxes.reserve(loads.size());
    for (const ChunkLoad& load : loads) {
      boxes.push_back({load.path, load.offset, load.extent, load.destination});
    }
    try {
      step_->load_boxes(boxes);
    } catch (const slipstream::Error& e) {
      throw error::ReadError(error::ReadError::AffectedObject::Dataset,
                             error::ReadError::Reason::CannotRead, std::string(kName),
                             "series '" + target_.path + "', iteration " + std::to_string(index) +
                                 ": " + e.what());
    }
  }

  void release_iteration(std::uint64_t index) override {
    if (step_ && step_->number() == static_cast<std::int64_t>(index)) {
      step_->release();
      step_.reset();
    }
  }

  chunk_assignment::RankMeta writer_ranks() override {
    chunk_assignment::RankMeta table;
    if (step_) {
      for (const auto& [rank, host] : step_->writers()) table.emplace(rank, host);
    }
    return table;
  }

  void close() override {
    if (writer_) {
      if (open_) close_iteration(*open_);
      writer_->close();
      writer_.reset();
    }
    step_.reset();
    reader_.reset();
  }

 private:
  slipstream::StreamWriter& writer() {
    if (!writer_) throw error::WrongAPIUsage("series '" + target_.path + "' is not written");
    return *writer_;
  }

  void write_one(std::optional<std::uint64_t> index, std::string_view path, std::string_view name,
                 const Attribute& value) {
    if (path.empty()) path = "/";
    StreamValue typed = to_stream(value, path, name);
    if (index) {
      writer().set_attribute(path, name, std::move(typed.value), typed.element);
    } else {
      writer().set_stream_attribute(path, name, std::move(typed.value), typed.element);
    }
  }

  IterationLayout layout_of(const slipstream::StreamStep& step) {
    IterationLayout layout;
    layout.index = static_cast<std::uint64_t>(step.number());
    const std::vector<slipstream::StreamComponent>& components = step.components();
    layout.same_shape = components.size() == component_shape_.size();
    for (std::size_t i = 0; i < components.size(); ++i) {
      const slipstream::StreamComponent& component = components[i];
      ComponentLayout out;
      out.path = component.name;
      out.dtype = from_dtype(component.dtype);
      out.extent = component.global_extent;
      for (const slipstream::stream::Chunk& chunk : component.chunks) {
        out.chunks.emplace_back(chunk.offset, chunk.extent, chunk.source_rank);
      }
      if (layout.same_shape && (component_shape_[i].first != out.path ||
                                component_shape_[i].second != out.dtype)) {
        layout.same_shape = false;
      }
      layout.components.push_back(std::move(out));
    }
    if (!layout.same_shape) {
      component_shape_.clear();
      for (const ComponentLayout& component : layout.components) {
        component_shape_.emplace_back(component.path, component.dtype);
      }
    }
    // The stream-level attributes (the series' root) come first and rarely change: converted
    // again only when they differ from the last step's.
    const std::vector<slipstream::StreamAttribute>& attributes = step.attributes();
    std::size_t stream_level = 0;
    while (stream_level < attributes.size() && attributes[stream_level].step < 0) ++stream_level;
    // Stream-level attributes of a record or component (a reduction's provenance) belong to that
    // path in every iteration: they join the step's own; the root keeps those of "/".
    using Attributes = std::span<const slipstream::StreamAttribute>;
    auto of_root = [](const slipstream::StreamAttribute& a) {
      return a.path == "/" || a.path.empty();
    };
    const auto stream_end = attributes.begin() + static_cast<std::ptrdiff_t>(stream_level);
    const bool with_paths = !std::all_of(attributes.begin(), stream_end, of_root);
    std::vector<slipstream::StreamAttribute> root_only, own_with_paths;
    if (with_paths) {
      for (auto a = attributes.begin(); a != stream_end; ++a) {
        (of_root(*a) ? root_only : own_with_paths).push_back(*a);
      }
      own_with_paths.insert(own_with_paths.end(), stream_end, attributes.end());
    }
    const Attributes root =
        with_paths ? Attributes(root_only) : Attributes(attributes.data(), stream_level);
    if (!std::equal(root.begin(), root.end(), root_source_.begin(), root_source_.end(),
                    same_attribute)) {
      root_.clear();
      for (const slipstream::StreamAttribute& attribute : root) root_.push_back(entry_of(attribute));
      root_source_.assign(root.begin(), root.end());
      root_changed_ = true;
    }
    // The step's own attributes: most are those of the last step with the same values (a
    // simulation's mesh and record attributes), so only what changed is converted again, in
    // place, and the layout refers to the kept list.
    const Attributes own = with_paths ? Attributes(own_with_paths)
                                      : Attributes(attributes.data() + stream_level,
                                                   attributes.size() - stream_level);
    bool same_names = own.size() == step_source_.size();
    for (std::size_t i = 0; same_names && i < own.size(); ++i) {
      same_names = own[i].path == step_source_[i].path && own[i].name == step_source_[i].name &&
                   own[i].element == step_source_[i].element &&
                   own[i].value.index() == step_source_[i].value.index();
    }
    if (!same_names) {
      layout.same_shape = false;
      step_kept_.clear();
      step_source_.assign(own.begin(), own.end());
      for (const slipstream::StreamAttribute& attribute : own) {
        step_kept_.push_back(entry_of(attribute));
      }
      layout.changed.assign(own.size(), true);
    } else {
      layout.changed.assign(own.size(), false);
      for (std::size_t i = 0; i < own.size(); ++i) {
        if (own[i].value == step_source_[i].value) continue;
        step_source_[i].value = own[i].value;
        step_kept_[i].value = from_stream(own[i].value, own[i].element);
        layout.changed[i] = true;
      }
    }
    layout.kept = &step_kept_;
    return layout;
  }

  static bool same_attribute(const slipstream::StreamAttribute& a,
                             const slipstream::StreamAttribute& b) {
    return a.path == b.path && a.name == b.name && a.element == b.element && a.value == b.value;
  }
  static AttributeEntry entry_of(const slipstream::StreamAttribute& attribute) {
    return {attribute.path == "/" ? "" : attribute.path, attribute.name,
            from_stream(attribute.value, attribute.element)};
  }

  BackendTarget target_;
  std::optional<slipstream::StreamWriter> writer_;
  std::optional<std::uint64_t> open_;
  std::optional<slipstream::StreamReader> reader_;
  std::optional<slipstream::StreamStep> step_;
  std::vector<AttributeEntry> root_;
  std::vector<slipstream::StreamAttribute> root_source_;  // what root_ was converted from
  // The last step's own attributes as received and as converted (layout_of), and its
  // components' paths and types.
  std::vector<slipstream::StreamAttribute> step_source_;
  std::vector<AttributeEntry> step_kept_;
  std::vector<std::pair<std::string, Datatype>> component_shape_;
  bool root_changed_ = true;  // since series_attributes_changed() was last asked
  std::optional<std::chrono::milliseconds> open_timeout_;
  bool first_step_seen_ = false;
  bool throw_on_aborted_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_stream_backend(const BackendTarget& target,
                                             const SeriesConfig& config) {
  return std::make_unique<StreamBackend>(target, config);
}

}  // namespace openPMD::internal

// RecordComponent: datasets declared, constants, and the stores and loads queued until the
// next flush, each checked against the component when it is queued.
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "openPMD/Error.hpp"
#include "openPMD/RecordComponent.hpp"
#include "openpmd/dataset_types.hpp"
#include "openpmd/node.hpp"
#include "openpmd/series_state.hpp"

namespace openPMD {

using internal::Node;

namespace {

std::string extent_text(const Extent& extent) {
  std::string text = "{";
  for (std::size_t d = 0; d < extent.size(); ++d) text += (d ? ", " : "") + std::to_string(extent[d]);
  return text + "}";
}

// Throws unless a series opened for writing holds `node` and its iteration is open.
void require_writable(const std::shared_ptr<Node>& node, const char* call) {
  std::shared_ptr<internal::SeriesState> series = internal::series_of(*node);
  if (series->reading()) {
    throw error::WrongAPIUsage(std::string(call) + " in " + internal::describe(node) +
                               ": the series is open for reading");
  }
  if (std::shared_ptr<Node> iteration = internal::iteration_of(node); iteration && iteration->closed) {
    throw error::WrongAPIUsage(std::string(call) + " in " + internal::describe(node) +
                               ": the iteration is closed");
  }
}

bool fits(const Offset& offset, const Extent& extent, const Extent& global) {
  if (offset.size() != global.size() || extent.size() != global.size()) return false;
  for (std::size_t d = 0; d < global.size(); ++d) {
    if (offset[d] > global[d] || extent[d] > global[d] - offset[d]) return false;
  }
  return true;
}

}  // namespace

double BaseRecordComponent::unitSI() const {
  return containsAttribute("unitSI") ? getAttribute("unitSI").get<double>() : 1.0;
}

BaseRecordComponent& BaseRecordComponent::resetDatatype(Datatype dtype) {
  require_writable(node_, "resetDatatype");
  if (node_->component.defined && !isSame(node_->component.dtype, dtype)) {
    throw error::WrongAPIUsage("resetDatatype in " + internal::describe(node_) +
                               ": the dataset was written as " +
                               datatypeToString(node_->component.dtype));
  }
  node_->component.dtype = dtype;
  return *this;
}

Datatype BaseRecordComponent::getDatatype() const { return node_->component.dtype; }

bool BaseRecordComponent::constant() const { return node_->component.constant; }

ChunkTable BaseRecordComponent::availableChunks() {
  const internal::ComponentState& state = node_->component;
  if (state.constant) return {WrittenChunkInfo(Offset(state.extent.size(), 0), state.extent)};
  if (!state.chunks.empty()) return state.chunks;
  ChunkTable table;
  for (const internal::QueuedStore& store : state.stores) table.emplace_back(store.offset, store.extent);
  return table;
}

RecordComponent& RecordComponent::setUnitSI(double unit) {
  setAttribute("unitSI", unit);
  return *this;
}

RecordComponent& RecordComponent::resetDataset(Dataset dataset) {
  require_writable(node_, "resetDataset");
  internal::ComponentState& state = node_->component;
  const Datatype dtype = dataset.dtype == Datatype::UNDEFINED ? state.dtype : dataset.dtype;
  if (dtype == Datatype::UNDEFINED) {
    throw error::WrongAPIUsage("resetDataset in " + internal::describe(node_) +
                               ": the dataset has no datatype");
  }
  if (isVector(dtype) || dtype == Datatype::STRING) {
    throw error::WrongAPIUsage("resetDataset in " + internal::describe(node_) + ": " +
                               datatypeToString(dtype) + " is an attribute type, not a dataset's");
  }
  for (std::uint64_t size : dataset.extent) {
    if (size == Dataset::JOINED_DIMENSION || size == Dataset::UNDEFINED_EXTENT) {
      throw error::WrongAPIUsage("resetDataset in " + internal::describe(node_) +
                                 ": joined and undefined dimensions are not supported");
    }
  }
  if (state.has_extent && state.defined) {
    if (!isSame(state.dtype, dtype)) {
      throw error::WrongAPIUsage("resetDataset in " + internal::describe(node_) +
                                 ": the dataset was declared as " + datatypeToString(state.dtype) +
                                 " and cannot become " + datatypeToString(dtype));
    }
    if (dataset.extent.size() != state.extent.size()) {
      throw error::WrongAPIUsage("resetDataset in " + internal::describe(node_) +
                                 ": the dataset was declared with extent " +
                                 extent_text(state.extent) + " and cannot change dimensionality to " +
                                 extent_text(dataset.extent));
    }
    for (std::size_t d = 0; d < state.extent.size(); ++d) {
      if (dataset.extent[d] < state.extent[d]) {
        throw error::WrongAPIUsage("resetDataset in " + internal::describe(node_) +
                                   ": the dataset was declared with extent " +
                                   extent_text(state.extent) + " and may only grow, not become " +
                                   extent_text(dataset.extent));
      }
    }
    if (dataset.extent != state.extent) state.defined = false;  // declared again, larger
  }
  // adios2.dataset.operators in the Dataset's options (openPMD-api's per-dataset configuration).
  if (dataset.options != "{}") state.op = internal::dataset_operator(dataset.options);
  state.dtype = dtype;
  state.extent = std::move(dataset.extent);
  state.has_extent = true;
  return *this;
}

std::uint8_t RecordComponent::getDimensionality() const {
  return static_cast<std::uint8_t>(node_->component.extent.size());
}

Extent RecordComponent::getExtent() const { return node_->component.extent; }

RecordComponent& RecordComponent::makeConstantImpl(Attribute value) {
  require_writable(node_, "makeConstant");
  internal::ComponentState& state = node_->component;
  if (!state.has_extent) {
    throw error::WrongAPIUsage("makeConstant in " + internal::describe(node_) +
                               ": call resetDataset first (the constant needs an extent)");
  }
  if (!state.stores.empty()) {
    throw error::WrongAPIUsage("makeConstant in " + internal::describe(node_) +
                               ": chunks were stored already");
  }
  state.constant = true;
  state.dtype = value.dtype;
  node_->set_attribute("value", std::move(value));
  std::vector<unsigned long> shape(state.extent.begin(), state.extent.end());
  node_->set_attribute("shape", Attribute(std::move(shape)));
  return *this;
}

RecordComponent& RecordComponent::makeEmpty(Datatype dtype, std::uint8_t dimensions) {
  resetDataset(Dataset(dtype, Extent(dimensions, 0)));
  return *this;
}

bool RecordComponent::empty() const {
  const internal::ComponentState& state = node_->component;
  if (!state.has_extent) return false;
  for (std::uint64_t size : state.extent) {
    if (size == 0) return true;
  }
  return false;
}

std::uint64_t RecordComponent::elementCount(const Extent& extent) {
  std::uint64_t count = 1;
  for (std::uint64_t size : extent) {
    if (size != 0 && count > std::numeric_limits<std::uint64_t>::max() / size) {
      throw error::WrongAPIUsage("a chunk extent of more than 2^64 elements");
    }
    count *= size;
  }
  return count;
}

std::uint64_t RecordComponent::resolveBox(Offset& offset, Extent& extent) const {
  const Extent& global = node_->component.extent;
  if (offset.empty() || (offset.size() == 1 && offset[0] == 0 && global.size() != 1)) {
    offset.assign(global.size(), 0);
  }
  if (extent.size() == 1 && extent[0] == std::uint64_t(0) - 1) {
    extent.assign(global.size(), 0);
    for (std::size_t d = 0; d < global.size() && d < offset.size(); ++d) {
      extent[d] = offset[d] <= global[d] ? global[d] - offset[d] : 0;
    }
  }
  if (!fits(offset, extent, global)) {
    throw error::WrongAPIUsage("chunk at " + extent_text(offset) + " of extent " +
                               extent_text(extent) + " lies outside " + internal::describe(node_) +
                               " of extent " + extent_text(global));
  }
  return elementCount(extent);
}

void RecordComponent::throwContainerSize(std::size_t size, const Extent& extent) const {
  throw error::WrongAPIUsage("storeChunk in " + internal::describe(node_) + ": a container of " +
                             std::to_string(size) + " elements for a chunk of extent " +
                             extent_text(extent));
}

void RecordComponent::storeChunkImpl(Datatype dtype, std::shared_ptr<const void> data,
                                     Offset offset, Extent extent) {
  require_writable(node_, "storeChunk");
  internal::ComponentState& state = node_->component;
  if (!state.has_extent) {
    throw error::WrongAPIUsage("storeChunk in " + internal::describe(node_) +
                               ": call resetDataset first");
  }
  if (state.constant) {
    throw error::WrongAPIUsage("storeChunk in " + internal::describe(node_) +
                               ": the component is constant");
  }
  if (!isSame(state.dtype, dtype)) {
    throw error::WrongAPIUsage("storeChunk in " + internal::describe(node_) +
                               ": Datatypes of chunk data (" + datatypeToString(dtype) +
                               ") and record component (" + datatypeToString(state.dtype) +
                               ") do not match");
  }
  const std::uint64_t elements = resolveBox(offset, extent);
  if (elements != 0 && !data) {
    throw error::WrongAPIUsage("storeChunk in " + internal::describe(node_) + ": no data");
  }
  state.stores.push_back({std::move(offset), std::move(extent), std::move(data), false});
}

std::shared_ptr<void> RecordComponent::storeSpanImpl(Datatype dtype, Offset offset, Extent extent,
                                                     std::size_t& elements) {
  // Checked as a store without data; the buffer is found after.
  storeChunkImpl(dtype, std::make_shared<char>(), offset, extent);
  internal::QueuedStore store = std::move(node_->component.stores.back());
  node_->component.stores.pop_back();
  elements = static_cast<std::size_t>(elementCount(store.extent));
  std::shared_ptr<internal::SeriesState> series = internal::series_of(*node_);
  if (void* loaned = series->loan(*node_, store.offset, store.extent)) {
    store.data = std::shared_ptr<const void>(std::shared_ptr<const void>(), loaned);
    store.loaned = true;
    node_->component.stores.push_back(store);
    return std::shared_ptr<void>(std::shared_ptr<void>(), loaned);
  }
  const std::size_t bytes = elements * toBytes(dtype);
  std::shared_ptr<std::byte> buffer(new std::byte[bytes == 0 ? 1 : bytes],
                                    std::default_delete<std::byte[]>());
  store.data = buffer;
  node_->component.stores.push_back(store);
  return buffer;
}

void RecordComponent::loadChunkImpl(Datatype dtype, std::shared_ptr<void> data, Offset offset,
                                    Extent extent) {
  std::shared_ptr<internal::SeriesState> series = internal::series_of(*node_);
  if (!series->reading() && series->target.access != Access::READ_WRITE) {
    throw error::WrongAPIUsage("loadChunk in " + internal::describe(node_) +
                               ": the series is open for writing");
  }
  internal::ComponentState& state = node_->component;
  if (!isSame(state.dtype, dtype) && !(state.constant && dtype != Datatype::UNDEFINED)) {
    throw error::WrongAPIUsage("loadChunk in " + internal::describe(node_) +
                               ": Type conversion during chunk loading not yet implemented (the "
                               "component holds " + datatypeToString(state.dtype) + ", not " +
                               datatypeToString(dtype) + ")");
  }
  if (std::shared_ptr<Node> iteration = internal::iteration_of(node_); iteration && iteration->closed) {
    throw error::WrongAPIUsage("loadChunk in " + internal::describe(node_) +
                               ": the iteration is closed");
  }
  resolveBox(offset, extent);
  state.loads.push_back({std::move(offset), std::move(extent), std::move(data)});
}

RecordComponent::shared_ptr_dataset_types RecordComponent::loadChunkVariant(Offset offset,
                                                                            Extent extent) {
  return internal::with_dataset_type(
      getDatatype(), "loadChunkVariant in " + internal::describe(node_),
      [&](auto* tag) -> shared_ptr_dataset_types {
        return loadChunk<std::remove_pointer_t<decltype(tag)>>(std::move(offset), std::move(extent));
      });
}

std::uint64_t PatchRecordComponent::patchIndexOfThisRank() const {
  return static_cast<std::uint64_t>(internal::series_of(*node_)->target.rank);
}

}  // namespace openPMD

// openPMD-api's record components: the n-dimensional arrays of a series. Stores and loads are
// deferred: storeChunk() and loadChunk() queue the operation, and the data move at the next
// flush (Series::flush(), Iteration::close()). A buffer given to storeChunk may be reused, and a
// loaded buffer read, once that flush has returned.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "openPMD/Attributable.hpp"
#include "openPMD/Dataset.hpp"
#include "openPMD/Datatype.hpp"
#include "slipstream/export.hpp"

namespace openPMD {

/// The SI base dimensions of unitDimension, in openPMD's order.
enum class UnitDimension : std::uint8_t { L = 0, M, T, I, theta, N, J };

/// A box of a component that a writer wrote, and which writer rank wrote it.
struct ChunkInfo {
  Offset offset;
  Extent extent;
  ChunkInfo() = default;
  ChunkInfo(Offset offset_, Extent extent_)
      : offset(std::move(offset_)), extent(std::move(extent_)) {}
  bool operator==(const ChunkInfo& other) const {
    return offset == other.offset && extent == other.extent;
  }
  bool operator!=(const ChunkInfo& other) const { return !(*this == other); }
};
struct WrittenChunkInfo : ChunkInfo {
  unsigned int sourceID = 0;
  WrittenChunkInfo() = default;
  WrittenChunkInfo(Offset offset_, Extent extent_, unsigned int source_id = 0)
      : ChunkInfo(std::move(offset_), std::move(extent_)), sourceID(source_id) {}
  bool operator==(const WrittenChunkInfo& other) const {
    return ChunkInfo::operator==(other) && sourceID == other.sourceID;
  }
  bool operator!=(const WrittenChunkInfo& other) const { return !(*this == other); }
};
using ChunkTable = std::vector<WrittenChunkInfo>;

/// A view of `size()` elements at `data()`, as openPMD-api's Span.
template <typename T>
class Span {
 public:
  Span() = default;
  Span(T* data, std::size_t size) : data_(data), size_(size) {}
  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  T* begin() const noexcept { return data_; }
  T* end() const noexcept { return data_ + size_; }
  T& operator[](std::size_t index) const noexcept { return data_[index]; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// The buffer of storeChunk's span form: fill currentBuffer() before the next flush. On a stream
/// over shared memory it is the memory the readers map (the chunk is never copied).
template <typename T>
class DynamicMemoryView {
 public:
  DynamicMemoryView() = default;
  DynamicMemoryView(std::shared_ptr<void> buffer, std::size_t size)
      : buffer_(std::move(buffer)), size_(size) {}
  Span<T> currentBuffer() { return Span<T>(static_cast<T*>(buffer_.get()), size_); }

 private:
  std::shared_ptr<void> buffer_;
  std::size_t size_ = 0;
};

class SLIPSTREAM_API BaseRecordComponent : public Attributable {
 public:
  explicit BaseRecordComponent(std::shared_ptr<internal::Node> node);
  /// The `unitSI` attribute (1 when unset).
  double unitSI() const;
  /// Sets the element type before the extent is known.
  BaseRecordComponent& resetDatatype(Datatype dtype);
  Datatype getDatatype() const;
  /// True when the component is one value for every element (makeConstant).
  bool constant() const;
  /// The chunks written, with the writer rank of each (files: one chunk, the whole extent).
  ChunkTable availableChunks();
};

class SLIPSTREAM_API RecordComponent : public BaseRecordComponent {
 public:
  /// The key of a record's only component (a scalar record).
  static constexpr const char* SCALAR = "\vScalar";

  explicit RecordComponent(std::shared_ptr<internal::Node> node);

  RecordComponent& setUnitSI(double unit);
  /// Declares the element type and extent. A dataset already declared may only grow (same type
  /// and dimensionality): error::WrongAPIUsage otherwise, naming the component.
  RecordComponent& resetDataset(Dataset dataset);
  std::uint8_t getDimensionality() const;
  Extent getExtent() const;

  /// Every element is `value`: stored as the `value` and `shape` attributes, no data.
  template <typename T>
  RecordComponent& makeConstant(T value) {
    return makeConstantImpl(Attribute(std::move(value)));
  }
  /// A dataset of `dimensions` dimensions and no elements.
  template <typename T>
  RecordComponent& makeEmpty(std::uint8_t dimensions) {
    return makeEmpty(determineDatatype<T>(), dimensions);
  }
  RecordComponent& makeEmpty(Datatype dtype, std::uint8_t dimensions);
  /// True when the dataset has no elements.
  bool empty() const;

  /// Queues a load of the box at `offset` with `extent` ({-1u}: to the end in every dimension)
  /// into a new buffer, filled at the next flush.
  template <typename T>
  std::shared_ptr<T> loadChunk(Offset offset = {0u}, Extent extent = {std::uint64_t(0) - 1}) {
    std::uint64_t elements = resolveBox(offset, extent);
    std::shared_ptr<T> data(new T[elements == 0 ? 1 : elements], std::default_delete<T[]>());
    loadChunkImpl(determineDatatype<T>(), data, std::move(offset), std::move(extent));
    return data;
  }
  template <typename T>
  void loadChunk(std::shared_ptr<T> data, Offset offset, Extent extent) {
    resolveBox(offset, extent);
    loadChunkImpl(determineDatatype<T>(), std::shared_ptr<void>(data, data.get()),
                  std::move(offset), std::move(extent));
  }
  template <typename T>
  void loadChunk(std::shared_ptr<T[]> data, Offset offset, Extent extent) {
    resolveBox(offset, extent);
    loadChunkImpl(determineDatatype<T>(), std::shared_ptr<void>(data, data.get()),
                  std::move(offset), std::move(extent));
  }
  /// Loads into caller memory that must stay valid until the next flush.
  template <typename T>
  void loadChunkRaw(T* data, Offset offset, Extent extent) {
    resolveBox(offset, extent);
    loadChunkImpl(determineDatatype<T>(), std::shared_ptr<void>(std::shared_ptr<void>(), data),
                  std::move(offset), std::move(extent));
  }

  using shared_ptr_dataset_types =
      std::variant<std::shared_ptr<char>, std::shared_ptr<unsigned char>,
                   std::shared_ptr<signed char>, std::shared_ptr<short>, std::shared_ptr<int>,
                   std::shared_ptr<long>, std::shared_ptr<long long>,
                   std::shared_ptr<unsigned short>, std::shared_ptr<unsigned int>,
                   std::shared_ptr<unsigned long>, std::shared_ptr<unsigned long long>,
                   std::shared_ptr<float>, std::shared_ptr<double>, std::shared_ptr<long double>,
                   std::shared_ptr<std::complex<float>>, std::shared_ptr<std::complex<double>>,
                   std::shared_ptr<std::complex<long double>>, std::shared_ptr<bool>>;
  /// loadChunk<T> for the component's own type.
  shared_ptr_dataset_types loadChunkVariant(Offset offset = {0u},
                                            Extent extent = {std::uint64_t(0) - 1});

  /// Queues a store of the box at `offset` with `extent` from `data` (kept alive by the layer
  /// until the flush).
  template <typename T>
  void storeChunk(std::shared_ptr<T> data, Offset offset, Extent extent) {
    storeChunkImpl(determineDatatype<T>(), std::shared_ptr<const void>(data, data.get()),
                   std::move(offset), std::move(extent));
  }
  template <typename T>
  void storeChunk(std::shared_ptr<T[]> data, Offset offset, Extent extent) {
    storeChunkImpl(determineDatatype<T>(), std::shared_ptr<const void>(data, data.get()),
                   std::move(offset), std::move(extent));
  }
  template <typename T, typename Deleter>
  void storeChunk(std::unique_ptr<T, Deleter> data, Offset offset, Extent extent) {
    using Element = std::remove_extent_t<T>;
    std::shared_ptr<Element> shared(data.release(), data.get_deleter());
    storeChunk(std::move(shared), std::move(offset), std::move(extent));
  }
  /// Stores from caller memory that must stay valid and unchanged until the next flush.
  template <typename T>
  void storeChunkRaw(T* data, Offset offset, Extent extent) {
    storeChunkImpl(determineDatatype<T>(),
                   std::shared_ptr<const void>(std::shared_ptr<const void>(), data),
                   std::move(offset), std::move(extent));
  }
  /// Stores from a contiguous container (std::vector, std::array): its whole size when `extent`
  /// is {-1u} in one dimension. The container must stay valid until the next flush.
  template <typename Container,
            typename = decltype(std::declval<Container&>().data()),
            typename = decltype(std::declval<Container&>().size())>
  void storeChunk(Container& data, Offset offset = {0u},
                  Extent extent = {std::uint64_t(0) - 1}) {
    using Element = std::remove_cv_t<std::remove_pointer_t<decltype(data.data())>>;
    if (extent.size() == 1 && extent[0] == std::uint64_t(0) - 1) {
      extent = {static_cast<std::uint64_t>(data.size())};
      if (offset.size() == 1 && offset[0] == 0 && getDimensionality() > 1) offset.clear();
    }
    if (elementCount(extent) != data.size()) {
      throwContainerSize(data.size(), extent);
    }
    storeChunkRaw(static_cast<const Element*>(data.data()), std::move(offset), std::move(extent));
  }
  /// The number of elements of `extent`; error::WrongAPIUsage beyond 2^64.
  static std::uint64_t elementCount(const Extent& extent);

  /// The span form: a buffer for the box, to fill before the next flush.
  template <typename T>
  DynamicMemoryView<T> storeChunk(Offset offset, Extent extent) {
    std::size_t elements = 0;
    std::shared_ptr<void> buffer =
        storeSpanImpl(determineDatatype<T>(), std::move(offset), std::move(extent), elements);
    return DynamicMemoryView<T>(std::move(buffer), elements);
  }
  /// The span form with a buffer maker (openPMD-api calls it when the backend has no buffer of its
  /// own; here the layer's buffer is always used and `createBuffer` is not called).
  template <typename T, typename F>
  DynamicMemoryView<T> storeChunk(Offset offset, Extent extent, F&&) {
    return storeChunk<T>(std::move(offset), std::move(extent));
  }
  /// Stores raw bytes of the component's own type from caller memory (valid until the flush).
  void storeChunkRaw(const void* data, Datatype dtype, Offset offset, Extent extent) {
    storeChunkImpl(dtype, std::shared_ptr<const void>(std::shared_ptr<const void>(), data),
                   std::move(offset), std::move(extent));
  }

 protected:
  RecordComponent& makeConstantImpl(Attribute value);
  void storeChunkImpl(Datatype dtype, std::shared_ptr<const void> data, Offset offset,
                      Extent extent);
  std::shared_ptr<void> storeSpanImpl(Datatype dtype, Offset offset, Extent extent,
                                      std::size_t& elements);
  void loadChunkImpl(Datatype dtype, std::shared_ptr<void> data, Offset offset, Extent extent);
  /// Replaces {0u} and {-1u} by the full offset and extent; returns the box's element count.
  /// Throws error::WrongAPIUsage when the box does not fit the component.
  std::uint64_t resolveBox(Offset& offset, Extent& extent) const;
  [[noreturn]] void throwContainerSize(std::size_t size, const Extent& extent) const;
};

class SLIPSTREAM_API MeshRecordComponent : public RecordComponent {
 public:
  explicit MeshRecordComponent(std::shared_ptr<internal::Node> node);
  /// Where in a cell the values sit (fractions of a cell per dimension; default all 0).
  template <typename T>
  std::vector<T> position() const {
    if (!containsAttribute("position")) return std::vector<T>(getDimensionality(), T(0));
    return getAttribute("position").get<std::vector<T>>();
  }
  template <typename T>
  MeshRecordComponent& setPosition(std::vector<T> position) {
    setAttribute("position", std::move(position));
    return *this;
  }
  MeshRecordComponent& setUnitSI(double unit) {
    RecordComponent::setUnitSI(unit);
    return *this;
  }
  template <typename T>
  MeshRecordComponent& makeConstant(T value) {
    RecordComponent::makeConstant(std::move(value));
    return *this;
  }
};

class SLIPSTREAM_API PatchRecordComponent : public RecordComponent {
 public:
  explicit PatchRecordComponent(std::shared_ptr<internal::Node> node);
  PatchRecordComponent& setUnitSI(double unit) {
    RecordComponent::setUnitSI(unit);
    return *this;
  }
  /// Stores one patch's value at `index` (deferred as storeChunk).
  template <typename T>
  void store(std::uint64_t index, T value) {
    auto data = std::make_shared<T>(value);
    storeChunk(std::move(data), {index}, {1});
  }
  /// Stores this rank's patch value (index: the writer's rank).
  template <typename T>
  void store(T value) {
    store(patchIndexOfThisRank(), value);
  }
  /// Loads every patch's value (deferred as loadChunk).
  template <typename T>
  std::shared_ptr<T> load() {
    return loadChunk<T>();
  }

 private:
  std::uint64_t patchIndexOfThisRank() const;
};

}  // namespace openPMD

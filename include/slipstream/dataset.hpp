// DataSet: named tensors plus typed metadata fields, stored by the client in the same layout as
// SmartRedis (hash `{name}.meta` + tensors `{name}.<tensor>`), so both clients read each other's.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "slipstream/export.hpp"
#include "slipstream/tensor.hpp"
#include "slipstream/tensor_data.hpp"

namespace slipstream {

namespace detail {
struct DataSetAccess;
}

/// Type of a metadata field. The values are the type byte of SmartRedis's field encoding.
enum class MetaDataType : std::uint8_t {
  kDouble = 1,
  kFloat = 2,
  kInt32 = 3,
  kInt64 = 4,
  kUInt32 = 5,
  kUInt64 = 6,
  kString = 7,
};

template <typename T>
struct MetaDataTypeOf;
template <>
struct MetaDataTypeOf<double> {
  static constexpr MetaDataType value = MetaDataType::kDouble;
};
template <>
struct MetaDataTypeOf<float> {
  static constexpr MetaDataType value = MetaDataType::kFloat;
};
template <>
struct MetaDataTypeOf<std::int32_t> {
  static constexpr MetaDataType value = MetaDataType::kInt32;
};
template <>
struct MetaDataTypeOf<std::int64_t> {
  static constexpr MetaDataType value = MetaDataType::kInt64;
};
template <>
struct MetaDataTypeOf<std::uint32_t> {
  static constexpr MetaDataType value = MetaDataType::kUInt32;
};
template <>
struct MetaDataTypeOf<std::uint64_t> {
  static constexpr MetaDataType value = MetaDataType::kUInt64;
};

/// A named group of tensors and metadata fields that is put and got as a unit.
///
/// Tensors are copied in (row-major) by add_tensor, so the caller's buffers are free as soon as it
/// returns. A field holds a list of values of one type; adding to a field appends. The field names
/// `.tensor_names` and `.COMPLETE` are reserved.
/// Move-only. Not synchronised: do not modify a DataSet while another thread uses it.
class SLIPSTREAM_API DataSet {
 public:
  /// Throws InvalidArgumentError if `name` is empty.
  explicit DataSet(std::string name);
  DataSet(DataSet&&) noexcept;
  DataSet& operator=(DataSet&&) noexcept;
  DataSet(const DataSet&) = delete;
  DataSet& operator=(const DataSet&) = delete;
  ~DataSet();

  const std::string& name() const noexcept { return name_; }

  /// Adds a copy of a tensor laid out in `order` for `shape`. Throws InvalidArgumentError if the
  /// name is empty or already used, or if the byte count does not match the shape and dtype.
  void add_tensor(std::string_view tensor_name, DType dtype, const void* data, std::size_t bytes,
                  std::span<const std::int64_t> shape, MemoryOrder order = MemoryOrder::kC);
  template <typename T>
  void add_tensor(std::string_view tensor_name, std::span<const T> data,
                  std::span<const std::int64_t> shape, MemoryOrder order = MemoryOrder::kC) {
    add_tensor(tensor_name, dtype_of<T>, data.data(), data.size_bytes(), shape, order);
  }
  /// Adds a tensor by moving it in. Same errors as above.
  void add_tensor(std::string_view tensor_name, Tensor tensor);

  /// The named tensor. Throws KeyNotFoundError if there is none. The reference is valid until the
  /// DataSet is modified or destroyed.
  const Tensor& get_tensor(std::string_view tensor_name) const;
  bool has_tensor(std::string_view tensor_name) const noexcept;
  /// Copies a tensor into the caller's buffer (see Tensor::copy_to for errors).
  template <typename T>
  void unpack_tensor(std::string_view tensor_name, std::span<T> out,
                     MemoryOrder order = MemoryOrder::kC) const {
    get_tensor(tensor_name).copy_to(out, order);
  }
  /// Tensor names in the order they were added.
  std::vector<std::string> get_tensor_names() const;

  /// Appends `value` to a scalar field, creating it. T is double, float, int32_t, int64_t,
  /// uint32_t or uint64_t. Throws InvalidArgumentError if the field exists with another type or
  /// the name is empty or reserved.
  template <typename T>
  void add_meta_scalar(std::string_view field, T value) {
    append_scalar(field, MetaDataTypeOf<T>::value, &value, sizeof(T));
  }
  /// Appends a string to a string field. Same errors as add_meta_scalar.
  void add_meta_string(std::string_view field, std::string_view value);

  /// All values of a scalar field. Throws KeyNotFoundError if the field does not exist and
  /// InvalidArgumentError if it holds another type.
  template <typename T>
  std::vector<T> get_meta_scalars(std::string_view field) const {
    std::string_view raw = scalar_bytes(field, MetaDataTypeOf<T>::value, sizeof(T));
    std::vector<T> values(raw.size() / sizeof(T));
    if (!values.empty()) std::memcpy(values.data(), raw.data(), raw.size());
    return values;
  }
  /// All values of a string field. Errors as get_meta_scalars.
  std::vector<std::string> get_meta_strings(std::string_view field) const;

  /// User metadata field names (without the internal `.tensor_names`), in the order added.
  std::vector<std::string> get_metadata_field_names() const;
  bool has_field(std::string_view field) const noexcept;
  /// Throws KeyNotFoundError if the field does not exist.
  MetaDataType get_metadata_field_type(std::string_view field) const;
  /// Removes a user field; does nothing if it does not exist.
  void clear_field(std::string_view field);

 private:
  friend struct detail::DataSetAccess;
  struct Field {
    std::string name;
    std::string encoded;  ///< type byte + payload, exactly as stored in the `.meta` hash
  };
  struct NamedTensor {
    std::string name;
    Tensor tensor;
  };

  void append_scalar(std::string_view field, MetaDataType type, const void* value,
                     std::size_t size);
  std::string_view scalar_bytes(std::string_view field, MetaDataType type, std::size_t size) const;
  const Field* find_field(std::string_view field) const noexcept;
  Field& field_for_append(std::string_view field, MetaDataType type);

  std::string name_;
  std::vector<Field> fields_;  ///< user fields and `.tensor_names`
  std::vector<NamedTensor> tensors_;
};

}  // namespace slipstream

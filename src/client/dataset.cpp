// DataSet: tensors plus metadata fields in SmartRedis's encoding (type byte, then raw
// little-endian values; strings as an 8-byte length and the bytes).
#include "slipstream/dataset.hpp"

#include <algorithm>

#include "client/dataset_access.hpp"

namespace slipstream {
namespace {

constexpr std::size_t kStringLengthSize = sizeof(std::uint64_t);

std::size_t scalar_size(MetaDataType type) {
  switch (type) {
    case MetaDataType::kDouble:
      return 8;
    case MetaDataType::kFloat:
      return 4;
    case MetaDataType::kInt32:
      return 4;
    case MetaDataType::kInt64:
      return 8;
    case MetaDataType::kUInt32:
      return 4;
    case MetaDataType::kUInt64:
      return 8;
    case MetaDataType::kString:
      return 0;
  }
  return 0;
}

std::string_view type_name(MetaDataType type) {
  switch (type) {
    case MetaDataType::kDouble:
      return "double";
    case MetaDataType::kFloat:
      return "float";
    case MetaDataType::kInt32:
      return "int32";
    case MetaDataType::kInt64:
      return "int64";
    case MetaDataType::kUInt32:
      return "uint32";
    case MetaDataType::kUInt64:
      return "uint64";
    case MetaDataType::kString:
      return "string";
  }
  return "invalid";
}

bool is_reserved(std::string_view field) {
  return field == detail::kTensorNamesField || field == detail::kCompleteField;
}

void append_string(std::string& encoded, std::string_view value) {
  std::uint64_t length = value.size();
  encoded.append(reinterpret_cast<const char*>(&length), kStringLengthSize);
  encoded.append(value);
}

// Decodes a string field; returns false if the bytes are not a valid encoding.
bool decode_strings(std::string_view encoded, std::vector<std::string>* out) {
  if (encoded.empty()) return true;
  if (static_cast<MetaDataType>(encoded[0]) != MetaDataType::kString) return false;
  std::size_t pos = 1;
  while (pos < encoded.size()) {
    if (encoded.size() - pos < kStringLengthSize) return false;
    std::uint64_t length = 0;
    std::memcpy(&length, encoded.data() + pos, kStringLengthSize);
    pos += kStringLengthSize;
    if (length > encoded.size() - pos) return false;
    if (out != nullptr) out->emplace_back(encoded.substr(pos, length));
    pos += length;
  }
  return true;
}

}  // namespace

DataSet::DataSet(std::string name) : name_(std::move(name)) {
  if (name_.empty()) throw InvalidArgumentError("a DataSet needs a non-empty name");
}
DataSet::DataSet(DataSet&&) noexcept = default;
DataSet& DataSet::operator=(DataSet&&) noexcept = default;
DataSet::~DataSet() = default;

void DataSet::add_tensor(std::string_view tensor_name, DType dtype, const void* data,
                         std::size_t bytes, std::span<const std::int64_t> shape,
                         MemoryOrder order) {
  add_tensor(tensor_name, Tensor::copy_of(dtype, data, bytes, shape, order));
}

void DataSet::add_tensor(std::string_view tensor_name, Tensor tensor) {
  if (tensor_name.empty()) throw InvalidArgumentError("tensor name must not be empty");
  if (has_tensor(tensor_name)) {
    throw InvalidArgumentError("DataSet '" + name_ + "' already has a tensor named '" +
                               std::string(tensor_name) + "'");
  }
  append_string(field_for_append(detail::kTensorNamesField, MetaDataType::kString).encoded,
                tensor_name);
  tensors_.push_back({std::string(tensor_name), std::move(tensor)});
}

const Tensor& DataSet::get_tensor(std::string_view tensor_name) const {
  for (const auto& t : tensors_) {
    if (t.name == tensor_name) return t.tensor;
  }
  throw KeyNotFoundError("DataSet '" + name_ + "' has no tensor named '" +
                         std::string(tensor_name) + "'");
}

bool DataSet::has_tensor(std::string_view tensor_name) const noexcept {
  return std::any_of(tensors_.begin(), tensors_.end(),
                     [&](const NamedTensor& t) { return t.name == tensor_name; });
}

std::vector<std::string> DataSet::get_tensor_names() const {
  std::vector<std::string> names;
  for (const auto& t : tensors_) names.push_back(t.name);
  return names;
}

const DataSet::Field* DataSet::find_field(std::string_view field) const noexcept {
  for (const auto& f : fields_) {
    if (f.name == field) return &f;
  }
  return nullptr;
}

DataSet::Field& DataSet::field_for_append(std::string_view field, MetaDataType type) {
  for (auto& f : fields_) {
    if (f.name != field) continue;
    auto existing = static_cast<MetaDataType>(f.encoded.at(0));
    if (existing != type) {
      throw InvalidArgumentError("metadata field '" + std::string(field) + "' of DataSet '" +
                                 name_ + "' holds " + std::string(type_name(existing)) +
                                 " values, not " + std::string(type_name(type)));
    }
    return f;
  }
  fields_.push_back({std::string(field), std::string(1, static_cast<char>(type))});
  return fields_.back();
}

void DataSet::append_scalar(std::string_view field, MetaDataType type, const void* value,
                            std::size_t size) {
  if (field.empty() || is_reserved(field)) {
    throw InvalidArgumentError("invalid metadata field name '" + std::string(field) + "'");
  }
  field_for_append(field, type).encoded.append(static_cast<const char*>(value), size);
}

void DataSet::add_meta_string(std::string_view field, std::string_view value) {
  if (field.empty() || is_reserved(field)) {
    throw InvalidArgumentError("invalid metadata field name '" + std::string(field) + "'");
  }
  append_string(field_for_append(field, MetaDataType::kString).encoded, value);
}

MetaDataType DataSet::get_metadata_field_type(std::string_view field) const {
  const Field* f = find_field(field);
  if (f == nullptr) {
    throw KeyNotFoundError("DataSet '" + name_ + "' has no metadata field '" + std::string(field) +
                           "'");
  }
  return static_cast<MetaDataType>(f->encoded.at(0));
}

std::string_view DataSet::scalar_bytes(std::string_view field, MetaDataType type,
                                       std::size_t size) const {
  MetaDataType stored = get_metadata_field_type(field);
  if (stored != type) {
    throw InvalidArgumentError("metadata field '" + std::string(field) + "' of DataSet '" + name_ +
                               "' holds " + std::string(type_name(stored)) + " values, not " +
                               std::string(type_name(type)));
  }
  std::string_view raw = find_field(field)->encoded;
  raw.remove_prefix(1);
  raw = raw.substr(0, raw.size() - raw.size() % size);
  return raw;
}

std::vector<std::string> DataSet::get_meta_strings(std::string_view field) const {
  MetaDataType stored = get_metadata_field_type(field);
  if (stored != MetaDataType::kString) {
    throw InvalidArgumentError("metadata field '" + std::string(field) + "' of DataSet '" + name_ +
                               "' holds " + std::string(type_name(stored)) +
                               " values, not strings");
  }
  std::vector<std::string> values;
  decode_strings(find_field(field)->encoded, &values);
  return values;
}

std::vector<std::string> DataSet::get_metadata_field_names() const {
  std::vector<std::string> names;
  for (const auto& f : fields_) {
    if (f.name != detail::kTensorNamesField) names.push_back(f.name);
  }
  return names;
}

bool DataSet::has_field(std::string_view field) const noexcept {
  return find_field(field) != nullptr;
}

void DataSet::clear_field(std::string_view field) {
  if (is_reserved(field)) return;
  std::erase_if(fields_, [&](const Field& f) { return f.name == field; });
}

namespace detail {

std::vector<std::pair<std::string_view, std::string_view>> DataSetAccess::encoded_fields(
    const DataSet& dataset) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (const auto& f : dataset.fields_) out.emplace_back(f.name, f.encoded);
  return out;
}

std::vector<std::pair<std::string_view, const Tensor*>> DataSetAccess::tensors(
    const DataSet& dataset) {
  std::vector<std::pair<std::string_view, const Tensor*>> out;
  for (const auto& t : dataset.tensors_) out.emplace_back(t.name, &t.tensor);
  return out;
}

void DataSetAccess::set_encoded_field(DataSet& dataset, std::string name, std::string encoded) {
  auto malformed = [&](std::string_view why) {
    throw ProtocolError("metadata field '" + name + "' of DataSet '" + dataset.name_ +
                        "' is malformed: " + std::string(why));
  };
  if (encoded.empty()) {  // SmartRedis reads an empty buffer as an empty string list
    encoded.assign(1, static_cast<char>(MetaDataType::kString));
  }
  auto type = static_cast<std::uint8_t>(encoded[0]);
  if (type < 1 || type > 7) malformed("unknown type byte " + std::to_string(type));
  auto meta_type = static_cast<MetaDataType>(type);
  if (meta_type == MetaDataType::kString) {
    if (!decode_strings(encoded, nullptr)) malformed("bad string lengths");
  } else if ((encoded.size() - 1) % scalar_size(meta_type) != 0) {
    malformed("payload is not a whole number of values");
  }
  for (auto& f : dataset.fields_) {
    if (f.name == name) {
      f.encoded = std::move(encoded);
      return;
    }
  }
  dataset.fields_.push_back({std::move(name), std::move(encoded)});
}

void DataSetAccess::attach_tensor(DataSet& dataset, std::string name, Tensor tensor) {
  dataset.tensors_.push_back({std::move(name), std::move(tensor)});
}

}  // namespace detail
}  // namespace slipstream

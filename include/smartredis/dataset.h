// SmartRedis::DataSet: named tensors and metadata fields put and got as one unit, stored in
// SmartRedis's layout, so SmartRedis and Slipstream clients read each other's datasets. A thin
// layer over slipstream::DataSet. Part of Slipstream's SmartRedis compatibility layer
// (docs/smartredis.md).
#ifndef SMARTREDIS_DATASET_H
#define SMARTREDIS_DATASET_H

#ifndef __cplusplus
#error "C programs include c_dataset.h, not the C++ header dataset.h"
#endif

#include <memory>
#include <string>
#include <vector>

#include "sr_enums.h"
#include "srexception.h"
#include "srobject.h"

namespace slipstream::smartredis {
struct DataSetAccess;
}

namespace SmartRedis {

/// Tensors are copied in by add_tensor. Pointers handed out by get_tensor, get_meta_scalars,
/// get_meta_strings and the char** forms stay valid until the DataSet is destroyed.
/// Errors are thrown as SmartRedis::Exception subclasses (srexception.h). Not synchronised.
class DataSet : public SRObject {
 public:
  /// Throws ParameterException for an empty name.
  explicit DataSet(const std::string& name);
  DataSet(const DataSet& dataset);
  DataSet& operator=(const DataSet& dataset);
  DataSet(DataSet&& dataset) noexcept;
  DataSet& operator=(DataSet&& dataset) noexcept;
  ~DataSet() override;

  /// Adds a copy of a tensor. `data` is contiguous row-major or nested pointer arrays
  /// (mem_layout). Throws ParameterException for a used name, bad dims, type or layout.
  void add_tensor(const std::string& name, const void* data, const std::vector<size_t>& dims,
                  const SRTensorType type, const SRMemoryLayout mem_layout);
  /// Appends the scalar `*data` of `type` to a field (ParameterException for
  /// SRMetadataTypeString: use add_meta_string; or if the field holds another type).
  void add_meta_scalar(const std::string& name, const void* data, const SRMetaDataType type);
  void add_meta_string(const std::string& name, const std::string& data);

  /// A tensor in memory owned by this DataSet, laid out as asked. Throws KeyException if it is
  /// not in the dataset.
  void get_tensor(const std::string& name, void*& data, std::vector<size_t>& dims,
                  SRTensorType& type, const SRMemoryLayout mem_layout);
  void get_tensor(const std::string& name, void*& data, size_t*& dims, size_t& n_dims,
                  SRTensorType& type, const SRMemoryLayout mem_layout);
  /// Copies a tensor into the caller's memory of `dims` and `type` (which must match the
  /// tensor's; ParameterException otherwise, naming both).
  void unpack_tensor(const std::string& name, void* data, const std::vector<size_t>& dims,
                     const SRTensorType type, const SRMemoryLayout mem_layout);

  /// All values of a scalar field, in memory owned by this DataSet. KeyException if missing.
  void get_meta_scalars(const std::string& name, void*& data, size_t& length,
                        SRMetaDataType& type);
  void get_meta_strings(const std::string& name, char**& data, size_t& n_strings,
                        size_t*& lengths);
  std::vector<std::string> get_meta_strings(const std::string& name) const;

  bool has_field(const std::string& field_name) const;
  /// Removes a metadata field (nothing if it does not exist).
  void clear_field(const std::string& field_name);

  std::vector<std::string> get_tensor_names() const;
  void get_tensor_names(char**& data, size_t& n_strings, size_t*& lengths);
  std::vector<size_t> get_tensor_dims(const std::string& name) const;
  void get_tensor_dims(const std::string& name, size_t*& dims, size_t& ndims);
  std::vector<std::string> get_metadata_field_names() const;
  void get_metadata_field_names(char**& data, size_t& n_strings, size_t*& lengths);
  SRMetaDataType get_metadata_field_type(const std::string& name) const;
  SRTensorType get_tensor_type(const std::string& name) const;
  const std::string& get_name() const { return name_; }
  /// A summary: the name, its tensors with types and dims, its fields.
  std::string to_string() const;

 private:
  friend struct slipstream::smartredis::DataSetAccess;
  struct Impl;
  std::string name_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace SmartRedis

#endif  // SMARTREDIS_DATASET_H

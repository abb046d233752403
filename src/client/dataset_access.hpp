// Library-internal access to a DataSet's encoded metadata fields and tensors, used by the client to
// store and rebuild datasets in SmartRedis's layout.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slipstream/dataset.hpp"

namespace slipstream::detail {

/// Hash field listing the tensor names (a string field).
inline constexpr std::string_view kTensorNamesField = ".tensor_names";
/// Hash field written last by put_dataset; its presence means the dataset is complete.
inline constexpr std::string_view kCompleteField = ".COMPLETE";

struct DataSetAccess {
  /// Every field (user fields and `.tensor_names`) as (name, encoded bytes).
  static std::vector<std::pair<std::string_view, std::string_view>> encoded_fields(
      const DataSet& dataset);
  /// Tensors as (name, tensor), in the order added.
  static std::vector<std::pair<std::string_view, const Tensor*>> tensors(const DataSet& dataset);
  /// Sets a field from its stored encoding. Throws ProtocolError if the encoding is malformed.
  static void set_encoded_field(DataSet& dataset, std::string name, std::string encoded);
  /// Adds a tensor whose name is already in `.tensor_names` (when rebuilding from the server).
  static void attach_tensor(DataSet& dataset, std::string name, Tensor tensor);
};

}  // namespace slipstream::detail

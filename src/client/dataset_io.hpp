// Helpers shared by the dataset and list calls: rebuilding a DataSet from its `.meta` hash and
// requesting its tensors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "client/request.hpp"
#include "slipstream/dataset.hpp"
#include "slipstream/reply.hpp"

namespace slipstream::client {

/// The names in the `.tensor_names` field of an HGETALL reply (empty if there is none).
std::vector<std::string> tensor_names_of(const Reply& meta, std::string_view dataset);
/// A DataSet named `name` holding every field of an HGETALL reply except `.COMPLETE`.
DataSet dataset_from_meta(std::string_view name, const Reply& meta);
/// Appends `AI.TENSORGET <dataset_key>.<t> META BLOB` for each tensor name.
void add_dataset_tensor_gets(Request& request, const std::string& dataset_key,
                             const std::vector<std::string>& tensor_names);

}  // namespace slipstream::client

// The operator policy of stored models and scripts; see operator_policy.hpp.
#include "ml/operator_policy.hpp"

#include <algorithm>

namespace slipstream::ml {

std::optional<std::string> refused_operator_reason(std::string_view qualified_name) {
  const auto colons = qualified_name.find("::");
  const std::string_view ns =
      colons == std::string_view::npos ? std::string_view{} : qualified_name.substr(0, colons);
  if (std::find(kDeniedOperators.begin(), kDeniedOperators.end(), qualified_name) !=
      kDeniedOperators.end()) {
    return "it reaches files, processes or the network";
  }
  if (std::find(kAllowedOperatorNamespaces.begin(), kAllowedOperatorNamespaces.end(), ns) ==
      kAllowedOperatorNamespaces.end()) {
    return "its namespace '" + std::string(ns) +
           "' is not one stored code may use (allowed: aten, prim, quantized, _quantized, "
           "prepacked)";
  }
  return std::nullopt;
}

}  // namespace slipstream::ml

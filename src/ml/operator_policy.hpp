// Which TorchScript operators stored models and scripts may call. The server checks every node of
// every function of a model or script when it is stored (and again when a snapshot is loaded), and
// refuses the whole model if one node is outside this policy.
//
// Why an allow list of namespaces first: operators come from whatever libraries are linked (c10d
// for distributed collectives, profiler, test ops, any custom-op library), and a new libtorch adds
// new ones. Only the tensor-math namespaces are allowed; inside them, the few operators that reach
// files, processes or the network are denied by name. tests/ml/operator_policy_test.cpp lists
// every operator registered in the linked libtorch and fails if an allowed one takes a file name.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace slipstream::ml {

/// Operator namespaces whose operators are pure computation on tensors and values.
inline constexpr std::array<std::string_view, 5> kAllowedOperatorNamespaces = {
    "aten", "prim", "quantized", "_quantized", "prepacked"};

/// Operators inside the allowed namespaces that are refused all the same.
inline constexpr std::array<std::string_view, 7> kDeniedOperators = {
    "aten::from_file",        // maps a file of the server's user into a tensor (read or write)
    "aten::save",             // writes a file
    "prim::rpc_async",        // torch.distributed.rpc: network calls to other processes
    "prim::rpc_sync",         //
    "prim::rpc_remote",       //
    "prim::PythonOp",         // calls into a Python interpreter
    "prim::IgnoredPythonOp",  //
};

/// Why the operator `qualified_name` ("ns::name") may not be used in stored code, or nullopt when
/// it may.
std::optional<std::string> refused_operator_reason(std::string_view qualified_name);

}  // namespace slipstream::ml

// libtorch interop for the torch files of src/ml (torch_backend.cpp, trainable_model.cpp): it
// includes torch headers, so nothing outside src/ml's torch files may include it.
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ml/backend.hpp"

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace slipstream::ml {

/// The useful part of a libtorch error text: the TorchScript exception line and the source line
/// it points at, without C++ backtraces, at most a few hundred characters.
std::string summarize_torch_error(std::string_view text);
/// summarize_torch_error of an exception (c10::Error without its backtrace).
std::string describe(const std::exception& error);

std::optional<c10::ScalarType> torch_type(DType type);
std::optional<DType> slipstream_type(c10::ScalarType type);
c10::Device torch_device(const Device& device);

/// Wraps the caller's buffers as tensors (no copy on the CPU; read only), checking dtype, shape
/// and size; copied to `device` when it is not the CPU.
Status wrap_inputs(std::span<const TensorView> inputs, const c10::Device& device,
                   std::vector<at::Tensor>& tensors);
/// Appends the tensors of `value` in order: a tensor, or a tuple or list (possibly nested) of them.
Status flatten(const c10::IValue& value, std::vector<at::Tensor>& tensors);
/// Copies each result tensor into a row-major OwnedTensor on the host.
Status copy_outputs(const c10::IValue& result, std::vector<OwnedTensor>& outputs);

// ---- Checks of stored code (defined in torch_backend.cpp, where the server applies them) ------

/// nullopt when every pickle record of the TorchScript archive `bytes` (data.pkl, constants.pkl,
/// the .debug_pkl records) passes check_pickle_bounds (pickle_check.hpp); else why not, naming the
/// record. Run before torch::jit::load: libtorch's unpickler allocates whatever length a string
/// opcode declares. Throws c10::Error when `bytes` is not an archive libtorch can open.
std::optional<std::string> check_archive_pickles(std::string_view bytes);
/// nullopt when every operator every function of `module` calls is allowed by the operator policy
/// (operator_policy.hpp); else the first one refused and where.
std::optional<std::string> check_module_operators(const torch::jit::Module& module);
/// torch::jit::load of the archive `bytes` onto the CPU, with the checks the server applies to a
/// model it stores: check_archive_pickles before, check_module_operators after. Throws
/// std::invalid_argument saying what a check refused, or libtorch's c10::Error.
torch::jit::Module load_checked_module(std::string_view bytes);

}  // namespace slipstream::ml

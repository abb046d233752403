// C API for in-process models (include/slipstream_local.h): slipstream::LocalModel behind an opaque
// handle, with the argument conversions and the per-thread last error of libslipstream_c.
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_internal.hpp"
#include "slipstream/local_model.hpp"
#include "slipstream_local.h"

struct slipstream_local_model {
  explicit slipstream_local_model(slipstream::LocalModel m) : model(std::move(m)) {}
  slipstream::LocalModel model;
};

using namespace slipstream::capi;
using slipstream::InvalidArgumentError;

namespace {

const slipstream::LocalModel& model_of(const slipstream_local_model_t* model) {
  return deref(model, "local model handle").model;
}

// The device argument: NULL or empty means the CPU.
std::string_view device_arg(const char* device, std::size_t length) {
  const std::string_view text = string_arg(device, length, "device");
  return text.empty() ? std::string_view("CPU") : text;
}

void model_out(slipstream::LocalModel model, slipstream_local_model_t** out) {
  *out = new slipstream_local_model(std::move(model));
}

// Borrowing C++ views of the output buffers; each buffer's fields are checked here, its fit to
// the model's output by LocalModel::run.
std::vector<slipstream::MutableTensorRef> output_refs(const slipstream_local_output_t* outputs,
                                                      std::size_t count) {
  std::vector<slipstream::MutableTensorRef> refs;
  if (count == 0) return refs;
  if (outputs == nullptr) {
    throw InvalidArgumentError("outputs is NULL but output_count is " + std::to_string(count));
  }
  refs.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const slipstream_local_output_t& out = outputs[i];
    if (out.data == nullptr && out.capacity > 0) {
      throw InvalidArgumentError("output " + std::to_string(i) + ": data is NULL but capacity is " +
                                 std::to_string(out.capacity));
    }
    refs.push_back({dtype_arg(out.dtype), out.data, out.capacity, shape_arg(out.shape, out.rank),
                    order_arg(out.order)});
  }
  return refs;
}

}  // namespace

extern "C" {

slipstream_status_t slipstream_local_model_load_file(const char* path, size_t path_length,
                                                     const char* device, size_t device_length,
                                                     slipstream_local_model_t** model) {
  return guarded([&] {
    deref(model, "model output pointer");
    const std::string file(string_arg(path, path_length, "path"));
    if (file.empty()) throw InvalidArgumentError("path is empty: expected a TorchScript file");
    model_out(slipstream::LocalModel::from_file(file, device_arg(device, device_length)), model);
  });
}

slipstream_status_t slipstream_local_model_load_bytes(const void* bytes, size_t length,
                                                      const char* device, size_t device_length,
                                                      slipstream_local_model_t** model) {
  return guarded([&] {
    deref(model, "model output pointer");
    if (bytes == nullptr && length > 0) {
      throw InvalidArgumentError("bytes is NULL but its length is " + std::to_string(length));
    }
    model_out(slipstream::LocalModel::from_bytes(
                  std::string_view(static_cast<const char*>(bytes), length),
                  device_arg(device, device_length)),
              model);
  });
}

slipstream_status_t slipstream_local_model_run(const slipstream_local_model_t* model,
                                               const slipstream_tensor_ref_t* inputs,
                                               size_t input_count,
                                               const slipstream_local_output_t* outputs,
                                               size_t output_count) {
  return guarded([&] {
    const slipstream::LocalModel& cpp = model_of(model);
    const std::vector<slipstream::TensorRef> in = tensor_refs(inputs, input_count);
    const std::vector<slipstream::MutableTensorRef> out = output_refs(outputs, output_count);
    cpp.run(in, out);
  });
}

slipstream_status_t slipstream_local_model_device(const slipstream_local_model_t* model,
                                                  char** device, size_t* length) {
  return guarded([&] { string_out(model_of(model).device(), device, length, "device"); });
}

slipstream_status_t slipstream_local_model_destroy(slipstream_local_model_t** model) {
  clear_last_error();
  if (model != nullptr) {
    delete *model;
    *model = nullptr;
  }
  return SLIPSTREAM_OK;
}

}  // extern "C"

// Example 01: put a 2-D tensor, get it back two ways, and round-trip a dataset with metadata.
// Usage: 01_put_get [ADDRESS]   (default: SLIPSTREAM_ADDRESS, then SSDB). Exits non-zero on any
// mismatch, so it also runs as a test.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "slipstream/client.hpp"

namespace {

bool check(bool ok, const char* what) {
  std::printf("  %-52s %s\n", what, ok ? "ok" : "MISMATCH");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    slipstream::ClientOptions options;
    if (argc > 1) options.address = argv[1];
    slipstream::Client client(options);
    std::printf("connected to %s\n", client.address().c_str());
    bool ok = true;

    // A 4 x 3 float field, row-major: element [i][j] = 10 * i + j.
    const std::vector<std::int64_t> shape{4, 3};
    std::vector<float> field(12);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) field[i * 3 + j] = 10.0f * i + j;
    }
    client.put_tensor<float>("example.field", field, shape);
    std::printf("put tensor 'example.field' FLOAT {4, 3}\n");

    slipstream::Tensor got = client.get_tensor("example.field");
    auto values = got.data<float>();
    ok &= check(got.dtype() == slipstream::DType::kFloat32, "get_tensor: dtype FLOAT");
    ok &= check(got.shape().size() == 2 && got.shape()[0] == 4 && got.shape()[1] == 3,
                "get_tensor: shape {4, 3}");
    ok &= check(std::vector<float>(values.begin(), values.end()) == field,
                "get_tensor: all 12 values");

    std::vector<float> unpacked(12);
    client.unpack_tensor<float>("example.field", unpacked, shape);
    ok &= check(unpacked == field, "unpack_tensor into a caller buffer");

    // The same data seen from Fortran: a(4, 3) in column-major memory.
    std::vector<float> fortran(12);
    client.unpack_tensor<float>("example.field", fortran, shape, slipstream::MemoryOrder::kFortran);
    ok &= check(fortran[2 + 4 * 1] == field[2 * 3 + 1], "Fortran order: a(3,2) == [2][1]");

    // A dataset: two tensors plus metadata, stored the way SmartRedis stores it.
    slipstream::DataSet step("example.step");
    step.add_tensor<float>("field", field, shape);
    const std::vector<std::int32_t> ids{7, 8, 9};
    const std::vector<std::int64_t> ids_shape{3};
    step.add_tensor<std::int32_t>("ids", ids, ids_shape);
    step.add_meta_scalar("time", 0.125);
    step.add_meta_scalar("iteration", std::int64_t{42});
    step.add_meta_string("model", "ocean-1deg");
    client.put_dataset(step);
    std::printf("put dataset 'example.step' (2 tensors, 3 metadata fields)\n");

    slipstream::DataSet back = client.get_dataset("example.step");
    ok &= check(back.get_tensor_names() == std::vector<std::string>{"field", "ids"},
                "get_dataset: tensor names");
    auto back_ids = back.get_tensor("ids").data<std::int32_t>();
    ok &= check(std::vector<std::int32_t>(back_ids.begin(), back_ids.end()) == ids,
                "get_dataset: tensor 'ids'");
    ok &= check(back.get_meta_scalars<double>("time") == std::vector<double>{0.125},
                "get_dataset: metadata 'time'");
    ok &= check(back.get_meta_scalars<std::int64_t>("iteration") == std::vector<std::int64_t>{42},
                "get_dataset: metadata 'iteration'");
    ok &= check(back.get_meta_strings("model") == std::vector<std::string>{"ocean-1deg"},
                "get_dataset: metadata 'model'");

    client.delete_tensor("example.field");
    client.delete_dataset("example.step");
    std::printf("%s\n", ok ? "all checks passed" : "SOME CHECKS FAILED");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
  } catch (const slipstream::Error& e) {
    std::fprintf(stderr, "error (%s): %s\n",
                 std::string(slipstream::error_code_name(e.code())).c_str(), e.what());
    return EXIT_FAILURE;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return EXIT_FAILURE;
  }
}

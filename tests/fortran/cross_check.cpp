// The C++ side of the cross-language round trip (see cross_language.sh for the whole test).
// Usage: cross_check read PREFIX    checks the arrays and dataset another language stored
//        cross_check write PREFIX   stores them from C++ (C order), for another language to read
// Keys and values are those documented in xlang_fortran.f90: PREFIX.<dtype>.rank<r> for dtype
// float32, float64, int8, int16, int32, int64 and r = 1..4, shape = the first r of {4, 3, 2, 5},
// element [i][j][k][l] = expected_value(n0) with n0 = i + 4j + 12k + 24l (the Fortran
// column-major offset of a(i+1, j+1, k+1, l+1)); and PREFIX.dataset.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "slipstream/client.hpp"

namespace {

using slipstream::DType;

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}

constexpr std::int64_t kFullShape[4] = {4, 3, 2, 5};

// Same formula as expected_value in tests/fortran/test_support.f90.
double expected_value(std::int64_t n0, DType dtype, int rank) {
  double value = static_cast<double>((7 * n0 + 3 * static_cast<int>(dtype) + rank) % 127 - 63);
  if (dtype == DType::kFloat32 || dtype == DType::kFloat64) value += 0.25;
  return value;
}

// The Fortran offset n0 of the row-major position `index` of a tensor of `rank` dimensions.
std::int64_t fortran_offset(std::int64_t index, int rank) {
  std::int64_t c_index[4] = {0, 0, 0, 0};
  for (int d = rank - 1; d >= 0; --d) {
    c_index[d] = index % kFullShape[d];
    index /= kFullShape[d];
  }
  return c_index[0] + 4 * c_index[1] + 12 * c_index[2] + 24 * c_index[3];
}

std::vector<std::int64_t> test_shape(int rank) { return {kFullShape, kFullShape + rank}; }

template <typename T>
std::vector<T> test_values(DType dtype, int rank) {
  const std::vector<std::int64_t> shape = test_shape(rank);
  std::int64_t count = 1;
  for (std::int64_t d : shape) count *= d;
  std::vector<T> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    values[static_cast<std::size_t>(i)] =
        static_cast<T>(expected_value(fortran_offset(i, rank), dtype, rank));
  }
  return values;
}

std::string key(const std::string& prefix, const char* dtype_name, int rank) {
  return prefix + "." + dtype_name + ".rank" + std::to_string(rank);
}

template <typename T>
void read_arrays(slipstream::Client& client, const std::string& prefix, const char* dtype_name) {
  const DType dtype = slipstream::dtype_of<T>;
  for (int rank = 1; rank <= 4; ++rank) {
    const std::string name = key(prefix, dtype_name, rank);
    slipstream::Tensor tensor = client.get_tensor(name);
    expect(tensor.dtype() == dtype, name + ": dtype");
    const std::vector<std::int64_t> shape(tensor.shape().begin(), tensor.shape().end());
    expect(shape == test_shape(rank), name + ": shape is the Fortran shape");
    if (tensor.dtype() != dtype || shape != test_shape(rank)) continue;
    // Row-major element [i][j]... must equal the value of a(i+1, j+1, ...).
    const std::vector<T> expected = test_values<T>(dtype, rank);
    auto values = tensor.data<T>();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < values.size(); ++i) wrong += values[i] != expected[i] ? 1 : 0;
    expect(wrong == 0, name + ": " + std::to_string(wrong) + " of " +
                           std::to_string(values.size()) + " elements differ");
  }
}

template <typename T>
void write_arrays(slipstream::Client& client, const std::string& prefix, const char* dtype_name) {
  const DType dtype = slipstream::dtype_of<T>;
  for (int rank = 1; rank <= 4; ++rank) {
    const std::vector<T> values = test_values<T>(dtype, rank);
    const std::vector<std::int64_t> shape = test_shape(rank);
    client.put_tensor<T>(key(prefix, dtype_name, rank), values, shape);
  }
}

void read_dataset(slipstream::Client& client, const std::string& prefix) {
  slipstream::DataSet dataset = client.get_dataset(prefix + ".dataset");
  const slipstream::Tensor& field = dataset.get_tensor("field");
  expect(std::vector<std::int64_t>(field.shape().begin(), field.shape().end()) == test_shape(2),
         "dataset field shape");
  const std::vector<double> expected_field = test_values<double>(DType::kFloat64, 2);
  auto field_values = field.data<double>();
  expect(std::vector<double>(field_values.begin(), field_values.end()) == expected_field,
         "dataset field values");
  auto ids = dataset.get_tensor("ids").data<std::int32_t>();
  expect(std::vector<std::int32_t>(ids.begin(), ids.end()) ==
             test_values<std::int32_t>(DType::kInt32, 1),
         "dataset ids values");
  expect(dataset.get_meta_scalars<std::int64_t>("step") == std::vector<std::int64_t>{42}, "step");
  expect(dataset.get_meta_scalars<double>("dt") == std::vector<double>{0.5}, "dt");
  expect(dataset.get_meta_scalars<std::int32_t>("count") == std::vector<std::int32_t>{-7}, "count");
  expect(dataset.get_meta_scalars<float>("ratio") == std::vector<float>{0.25f}, "ratio");
  expect(dataset.get_meta_strings("model") == std::vector<std::string>{"ocean-1deg"}, "model");
}

void write_dataset(slipstream::Client& client, const std::string& prefix) {
  slipstream::DataSet dataset(prefix + ".dataset");
  const std::vector<std::int64_t> field_shape = test_shape(2), ids_shape = test_shape(1);
  dataset.add_tensor<double>("field", test_values<double>(DType::kFloat64, 2), field_shape);
  dataset.add_tensor<std::int32_t>("ids", test_values<std::int32_t>(DType::kInt32, 1), ids_shape);
  dataset.add_meta_scalar("step", std::int64_t{42});
  dataset.add_meta_scalar("dt", 0.5);
  dataset.add_meta_scalar("count", std::int32_t{-7});
  dataset.add_meta_scalar("ratio", 0.25f);
  dataset.add_meta_string("model", "ocean-1deg");
  client.put_dataset(dataset);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "read" && std::string(argv[1]) != "write")) {
    std::fprintf(stderr, "usage: cross_check read|write PREFIX\n");
    return 2;
  }
  const std::string mode = argv[1], prefix = argv[2];
  try {
    slipstream::Client client;
    if (mode == "read") {
      read_arrays<float>(client, prefix, "float32");
      read_arrays<double>(client, prefix, "float64");
      read_arrays<std::int8_t>(client, prefix, "int8");
      read_arrays<std::int16_t>(client, prefix, "int16");
      read_arrays<std::int32_t>(client, prefix, "int32");
      read_arrays<std::int64_t>(client, prefix, "int64");
      read_dataset(client, prefix);
    } else {
      write_arrays<float>(client, prefix, "float32");
      write_arrays<double>(client, prefix, "float64");
      write_arrays<std::int8_t>(client, prefix, "int8");
      write_arrays<std::int16_t>(client, prefix, "int16");
      write_arrays<std::int32_t>(client, prefix, "int32");
      write_arrays<std::int64_t>(client, prefix, "int64");
      write_dataset(client, prefix);
    }
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    ++failures;
  }
  std::printf("cross_check %s %s: %s\n", mode.c_str(), prefix.c_str(),
              failures == 0 ? "all checks passed" : "FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

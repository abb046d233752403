// The C++ side of the cross-language round trip (test_cross_language.py): writes arrays of every
// Fortran-visible dtype and rank 1-4 plus a dataset from column-major buffers, exactly as the
// Fortran module hands them over, and checks every element of what another language wrote.
// Keys, shapes and the value formula are documented in test_cross_language.py.
// Usage: cross_language_peer write|check WRITER   (address: SLIPSTREAM_ADDRESS)
// Exit status: 0 when everything matches, 1 on a mismatch (each is printed), 2 on an error.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "slipstream/client.hpp"

namespace {

using Shape = std::vector<std::int64_t>;

// Rank r uses kShapes[r - 1]; every array has at most 24 elements, so each value is distinct and
// fits int8.
const std::vector<Shape> kShapes = {{7}, {5, 3}, {4, 3, 2}, {3, 2, 2, 2}};

std::size_t count(const Shape& shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

// The value at column-major flat index n (a(i1,...,ir) with n = (i1-1) + n1*((i2-1) + ...)).
template <typename T>
T value(std::size_t n, std::size_t rank) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(n + rank) + static_cast<T>(0.25);
  } else {
    return static_cast<T>(n + rank);
  }
}

template <typename T>
std::vector<T> column_major(const Shape& shape) {
  std::vector<T> values(count(shape));
  for (std::size_t n = 0; n < values.size(); ++n) values[n] = value<T>(n, shape.size());
  return values;
}

std::string tensor_key(const std::string& writer, const char* dtype, std::size_t rank) {
  return "xlang." + writer + "." + dtype + ".r" + std::to_string(rank);
}

int mismatches = 0;

void mismatch(const std::string& what) {
  std::printf("MISMATCH %s\n", what.c_str());
  ++mismatches;
}

template <typename T>
void write_arrays(slipstream::Client& client, const std::string& writer, const char* dtype) {
  for (const Shape& shape : kShapes) {
    std::vector<T> values = column_major<T>(shape);
    client.put_tensor<T>(tensor_key(writer, dtype, shape.size()), values, shape,
                         slipstream::MemoryOrder::kFortran);
  }
}

template <typename T>
void check_arrays(slipstream::Client& client, const std::string& writer, const char* dtype) {
  for (const Shape& shape : kShapes) {
    const std::string key = tensor_key(writer, dtype, shape.size());
    std::vector<T> got(count(shape));
    client.unpack_tensor<T>(key, got, shape, slipstream::MemoryOrder::kFortran);
    std::vector<T> expected = column_major<T>(shape);
    for (std::size_t n = 0; n < got.size(); ++n) {
      if (std::memcmp(&got[n], &expected[n], sizeof(T)) != 0) {
        mismatch(key + " column-major element " + std::to_string(n));
      }
    }
  }
}

template <typename Visit>
void for_each_dtype(Visit&& visit) {
  visit.template operator()<float>("float32");
  visit.template operator()<double>("float64");
  visit.template operator()<std::int8_t>("int8");
  visit.template operator()<std::int16_t>("int16");
  visit.template operator()<std::int32_t>("int32");
  visit.template operator()<std::int64_t>("int64");
}

void write_dataset(slipstream::Client& client, const std::string& writer) {
  slipstream::DataSet dataset("xlang." + writer + ".dataset");
  for (const Shape& shape : kShapes) {
    std::vector<double> values = column_major<double>(shape);
    dataset.add_tensor<double>("r" + std::to_string(shape.size()), values, shape,
                               slipstream::MemoryOrder::kFortran);
  }
  dataset.add_meta_scalar("step", std::int64_t{42});
  dataset.add_meta_scalar("time", 0.125);
  dataset.add_meta_string("writer", writer);
  client.put_dataset(dataset);
}

void check_dataset(slipstream::Client& client, const std::string& writer) {
  const std::string name = "xlang." + writer + ".dataset";
  slipstream::DataSet dataset = client.get_dataset(name);
  for (const Shape& shape : kShapes) {
    const std::string tensor = "r" + std::to_string(shape.size());
    const slipstream::Tensor& stored = dataset.get_tensor(tensor);
    if (!std::equal(shape.begin(), shape.end(), stored.shape().begin(), stored.shape().end())) {
      mismatch(name + "." + tensor + " shape");
      continue;
    }
    std::vector<double> got(count(shape));
    dataset.unpack_tensor<double>(tensor, got, slipstream::MemoryOrder::kFortran);
    if (got != column_major<double>(shape)) mismatch(name + "." + tensor + " values");
  }
  if (dataset.get_meta_scalars<std::int64_t>("step") != std::vector<std::int64_t>{42}) {
    mismatch(name + " metadata step");
  }
  if (dataset.get_meta_scalars<double>("time") != std::vector<double>{0.125}) {
    mismatch(name + " metadata time");
  }
  if (dataset.get_meta_strings("writer") != std::vector<std::string>{writer}) {
    mismatch(name + " metadata writer");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "write") != 0 && std::strcmp(argv[1], "check") != 0)) {
    std::fprintf(stderr, "usage: %s write|check WRITER\n", argv[0]);
    return 2;
  }
  const bool write = std::strcmp(argv[1], "write") == 0;
  const std::string writer = argv[2];
  try {
    slipstream::Client client;
    if (write) {
      for_each_dtype(
          [&]<typename T>(const char* dtype) { write_arrays<T>(client, writer, dtype); });
      write_dataset(client, writer);
      std::printf("wrote 24 arrays and dataset xlang.%s.dataset\n", writer.c_str());
      return 0;
    }
    for_each_dtype([&]<typename T>(const char* dtype) { check_arrays<T>(client, writer, dtype); });
    check_dataset(client, writer);
    std::printf("checked 24 arrays and dataset xlang.%s.dataset: %d mismatches\n", writer.c_str(),
                mismatches);
    return mismatches == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}

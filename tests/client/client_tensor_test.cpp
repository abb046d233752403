// Client tensor calls against a real server: every dtype round trip, Fortran order, errors,
// key operations and batched puts/gets, over TCP and the Unix socket.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "client_fixture.hpp"

namespace slipstream::testing {
namespace {

class TensorTest : public ClientTest {};
SLIPSTREAM_INSTANTIATE_TRANSPORTS(TensorTest);

template <typename T>
std::vector<T> sample(std::size_t n) {
  std::vector<T> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      values[i] = i % 3 == 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      values[i] = static_cast<T>(i) * static_cast<T>(0.5) - static_cast<T>(3.25);
    } else if constexpr (std::is_signed_v<T>) {
      values[i] = static_cast<T>(static_cast<int>(i % 100) - 50);
    } else {
      values[i] = static_cast<T>(i % 200);
    }
  }
  return values;
}

template <typename T>
void round_trip(Client& client, const std::string& name) {
  const std::vector<std::int64_t> shape{3, 4, 5};
  // std::vector<bool> has no data(): keep booleans in a plain array.
  std::unique_ptr<T[]> values(new T[60]);
  auto filled = sample<T>(60);
  std::copy(filled.begin(), filled.end(), values.get());
  std::span<const T> in(values.get(), 60);

  client.put_tensor<T>(name, in, shape);
  ASSERT_TRUE(client.tensor_exists(name));

  Tensor got = client.get_tensor(name);
  EXPECT_EQ(got.dtype(), dtype_of<T>);
  EXPECT_EQ(std::vector<std::int64_t>(got.shape().begin(), got.shape().end()), shape);
  ASSERT_EQ(got.size(), 60u);
  EXPECT_EQ(std::memcmp(got.data<T>().data(), values.get(), 60 * sizeof(T)), 0);

  std::unique_ptr<T[]> out(new T[60]{});
  auto stored_shape = client.unpack_tensor<T>(name, std::span<T>(out.get(), 60), shape);
  EXPECT_EQ(stored_shape, shape);
  EXPECT_EQ(std::memcmp(out.get(), values.get(), 60 * sizeof(T)), 0);
}

TEST_P(TensorTest, EveryDtypeRoundTrips) {
  round_trip<float>(client(), unique("f32"));
  round_trip<double>(client(), unique("f64"));
  round_trip<std::int8_t>(client(), unique("i8"));
  round_trip<std::int16_t>(client(), unique("i16"));
  round_trip<std::int32_t>(client(), unique("i32"));
  round_trip<std::int64_t>(client(), unique("i64"));
  round_trip<std::uint8_t>(client(), unique("u8"));
  round_trip<std::uint16_t>(client(), unique("u16"));
  round_trip<bool>(client(), unique("bool"));
}

TEST_P(TensorTest, LargeTensorRoundTrips) {
  std::vector<float> values(4 << 20);  // 16 MiB: read straight into the caller's buffer
  std::iota(values.begin(), values.end(), 0.0f);
  const std::vector<std::int64_t> shape{1024, 4096};
  client().put_tensor<float>(unique("big"), values, shape);
  std::vector<float> out(values.size());
  client().unpack_tensor<float>(unique("big"), out);
  EXPECT_EQ(out, values);
  EXPECT_EQ(client().get_tensor(unique("big")).data<float>()[123456], 123456.0f);
}

TEST_P(TensorTest, UntypedPutAndWireFormat) {
  const std::int32_t values[] = {1, -2, 3, -4, 5, -6};
  const std::vector<std::int64_t> shape{2, 3};
  client().put_tensor(unique("t"), DType::kInt32, values, sizeof values, shape);
  Reply reply = client().command({"AI.TENSORGET", unique("t"), "META", "BLOB"});
  ASSERT_TRUE(reply.is_array());
  ASSERT_EQ(reply.elements.size(), 6u);
  EXPECT_EQ(reply.elements[1].string, "INT32");
  ASSERT_EQ(reply.elements[3].elements.size(), 2u);
  EXPECT_EQ(reply.elements[3].elements[1].integer, 3);
  EXPECT_EQ(reply.elements[5].string,
            std::string(reinterpret_cast<const char*>(values), sizeof values));
}

// A Fortran a(nx, ny, nz) keeps shape {nx, ny, nz}; element [i][j][k] of the stored row-major
// tensor is a(i+1, j+1, k+1).
TEST_P(TensorTest, FortranOrderKeepsLogicalShape) {
  const std::int64_t nx = 3, ny = 4, nz = 2;
  std::vector<double> fortran(nx * ny * nz);
  auto f_index = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    return i + nx * (j + ny * k);  // column-major
  };
  for (std::int64_t i = 0; i < nx; ++i) {
    for (std::int64_t j = 0; j < ny; ++j) {
      for (std::int64_t k = 0; k < nz; ++k) {
        fortran[f_index(i, j, k)] = 100.0 * (i + 1) + 10.0 * (j + 1) + (k + 1);
      }
    }
  }
  const std::vector<std::int64_t> shape{nx, ny, nz};
  client().put_tensor<double>(unique("f"), fortran, shape, MemoryOrder::kFortran);

  Tensor stored = client().get_tensor(unique("f"));
  EXPECT_EQ(std::vector<std::int64_t>(stored.shape().begin(), stored.shape().end()), shape);
  auto c = stored.data<double>();
  for (std::int64_t i = 0; i < nx; ++i) {
    for (std::int64_t j = 0; j < ny; ++j) {
      for (std::int64_t k = 0; k < nz; ++k) {
        EXPECT_EQ(c[(i * ny + j) * nz + k], 100.0 * (i + 1) + 10.0 * (j + 1) + (k + 1))
            << "[" << i << "][" << j << "][" << k << "]";
      }
    }
  }

  std::vector<double> back(fortran.size());
  client().unpack_tensor<double>(unique("f"), back, shape, MemoryOrder::kFortran);
  EXPECT_EQ(back, fortran);
  std::vector<double> via_tensor(fortran.size());
  stored.copy_to<double>(via_tensor, MemoryOrder::kFortran);
  EXPECT_EQ(via_tensor, fortran);
}

TEST_P(TensorTest, FortranTwoDimensional) {
  // a(2,3) = [[1,3,5],[2,4,6]] in Fortran memory is 1,2,3,4,5,6.
  const std::vector<float> fortran{1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> shape{2, 3};
  client().put_tensor<float>(unique("a"), fortran, shape, MemoryOrder::kFortran);
  auto c = client().get_tensor(unique("a"));
  EXPECT_EQ(std::vector<float>(c.data<float>().begin(), c.data<float>().end()),
            (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

TEST_P(TensorTest, MissingTensorIsKeyNotFound) {
  EXPECT_THROW(client().get_tensor(unique("nope")), KeyNotFoundError);
  std::vector<float> out(4);
  EXPECT_THROW(client().unpack_tensor<float>(unique("nope"), out), KeyNotFoundError);
  EXPECT_FALSE(client().tensor_exists(unique("nope")));
  EXPECT_THROW(client().rename_tensor(unique("nope"), unique("x")), KeyNotFoundError);
  EXPECT_THROW(client().copy_tensor(unique("nope"), unique("x")), KeyNotFoundError);
  // The connection is still in step afterwards.
  EXPECT_TRUE(client().command({"PING"}).is_status("PONG"));
}

TEST_P(TensorTest, WrongDtypeAndSmallBufferAreClearErrors) {
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> shape{2, 3};
  client().put_tensor<float>(unique("t"), values, shape);

  std::vector<double> wrong(6);
  try {
    client().unpack_tensor<double>(unique("t"), wrong);
    FAIL() << "no exception";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("FLOAT"), std::string::npos) << e.what();
  }
  std::vector<float> small(5);
  try {
    client().unpack_tensor<float>(unique("t"), small);
    FAIL() << "no exception";
  } catch (const BufferTooSmallError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kBufferTooSmall);
  }
  std::vector<float> out(6);
  const std::vector<std::int64_t> other{3, 2};
  try {
    client().unpack_tensor<float>(unique("t"), out, other);
    FAIL() << "no exception";
  } catch (const InvalidArgumentError& e) {
    // Both shapes, so the caller sees which dimension is off.
    EXPECT_NE(std::string(e.what()).find("has shape {2, 3}, not the expected {3, 2}"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(client().get_tensor(unique("t")).data<std::int32_t>(), InvalidArgumentError);
  // Still in step: the discarded payload did not leak into the next reply.
  client().unpack_tensor<float>(unique("t"), out, shape);
  EXPECT_EQ(out, values);
}

TEST_P(TensorTest, BadPutArgumentsAreRejectedBeforeSending) {
  const std::vector<float> values{1, 2, 3};
  const std::vector<std::int64_t> shape{2, 2};
  EXPECT_THROW(client().put_tensor<float>(unique("t"), values, shape), InvalidArgumentError);
  const std::vector<std::int64_t> zero{0, 3};
  EXPECT_THROW(client().put_tensor<float>(unique("t"), values, zero), InvalidArgumentError);
  const std::vector<std::int64_t> ok{3};
  EXPECT_THROW(client().put_tensor<float>("", values, ok), InvalidArgumentError);
  EXPECT_FALSE(client().tensor_exists(unique("t")));
}

TEST_P(TensorTest, WrongTypeKey) {
  client().put_bytes(unique("s"), "hello");
  EXPECT_THROW(client().get_tensor(unique("s")), WrongTypeError);
  EXPECT_EQ(client().get_bytes(unique("s")), "hello");
}

TEST_P(TensorTest, DeleteRenameCopy) {
  const std::vector<std::int64_t> values{7, 8, 9};
  const std::vector<std::int64_t> shape{3};
  client().put_tensor<std::int64_t>(unique("a"), values, shape);
  client().copy_tensor(unique("a"), unique("b"));
  client().rename_tensor(unique("a"), unique("c"));
  EXPECT_FALSE(client().tensor_exists(unique("a")));
  auto b = client().get_tensor(unique("b"));
  auto c = client().get_tensor(unique("c"));
  EXPECT_EQ(std::vector<std::int64_t>(b.data<std::int64_t>().begin(), b.data<std::int64_t>().end()),
            values);
  EXPECT_EQ(c.byte_size(), 24u);
  EXPECT_TRUE(client().delete_tensor(unique("b")));
  EXPECT_FALSE(client().delete_tensor(unique("b")));
}

TEST_P(TensorTest, BatchPutAndGet) {
  std::vector<std::vector<float>> data;
  std::vector<std::string> names;
  const std::vector<std::int64_t> shape{10, 10};
  for (int i = 0; i < 20; ++i) {
    data.emplace_back(100, static_cast<float>(i));
    names.push_back(unique(numbered("b", i)));
  }
  std::vector<TensorRef> refs;
  for (int i = 0; i < 20; ++i) {
    refs.push_back(TensorRef::of<float>(names[i], data[i], shape));
  }
  client().put_tensors(refs);
  auto got = client().get_tensors(names);
  ASSERT_EQ(got.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(got[i].data<float>()[99], static_cast<float>(i));
  }
  // One missing name: the error is thrown, and the connection stays usable.
  names.push_back(unique("missing"));
  EXPECT_THROW(client().get_tensors(names), KeyNotFoundError);
  EXPECT_EQ(client().get_tensor(names[0]).data<float>()[0], 0.0f);
}

}  // namespace
}  // namespace slipstream::testing

// Compressed tensors (issue 31: operators per tensor in the client's put calls) against a real
// server, over TCP and the Unix socket with shared memory: every lossless operator and dtype
// round-trips exactly through every way a tensor is read (get_tensor, unpack_tensor in both
// orders, get_tensors, a RedisAI client's AI.TENSORGET BLOB and VALUES, decoded by the server, a
// script's input); zfp stays within its accuracy; the server stores the compressed bytes (smaller)
// and keeps them through a snapshot and a restart; bad operators and forged frames are errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "client_fixture.hpp"
#include "support/message_of.hpp"

namespace slipstream::testing {
namespace {

class CompressedTensorTest : public ClientTest {};
SLIPSTREAM_INSTANTIATE_TRANSPORTS(CompressedTensorTest);

const std::vector<std::int64_t> kShape{16, 24, 8};
constexpr std::size_t kCount = 16 * 24 * 8;

// Compressible values of `dtype`, row-major bytes.
std::vector<std::byte> values(DType dtype) {
  std::vector<std::byte> out(kCount * dtype_size(dtype));
  for (std::size_t i = 0; i < kCount; ++i) {
    const double v = static_cast<double>(i % 37) - 18.0;
    std::byte* at = out.data() + i * dtype_size(dtype);
    auto put = [&](auto typed) { std::memcpy(at, &typed, sizeof(typed)); };
    switch (dtype) {
      case DType::kFloat32: put(static_cast<float>(v) * 0.25f); break;
      case DType::kFloat64: put(v * 0.125); break;
      case DType::kInt8: put(static_cast<std::int8_t>(v)); break;
      case DType::kInt16: put(static_cast<std::int16_t>(v * 300)); break;
      case DType::kInt32: put(static_cast<std::int32_t>(v * 1e5)); break;
      case DType::kInt64: put(static_cast<std::int64_t>(v * 1e10)); break;
      case DType::kUInt8: put(static_cast<std::uint8_t>(v + 18)); break;
      case DType::kUInt16: put(static_cast<std::uint16_t>((v + 18) * 100)); break;
      case DType::kUInt32: put(static_cast<std::uint32_t>((v + 18) * 1e6)); break;
      case DType::kUInt64: put(static_cast<std::uint64_t>((v + 18) * 1e12)); break;
      case DType::kBool: put(static_cast<std::uint8_t>(i % 3 == 0)); break;
    }
  }
  return out;
}

const std::vector<DType> kDtypes = {DType::kFloat32, DType::kFloat64, DType::kInt8,
                                    DType::kInt16,   DType::kInt32,   DType::kInt64,
                                    DType::kUInt8,   DType::kUInt16,  DType::kUInt32,
                                    DType::kUInt64,  DType::kBool};

const std::vector<CompressionOperator> kLossless = {
    {"zstd", {{"level", "5"}}},
    {"blosc", {{"clevel", "5"}, {"doshuffle", "BLOSC_SHUFFLE"}, {"compressor", "lz4"}}},
    {"bzip2", {{"blockSize100k", "9"}}},
};

// The size of the frame the server holds for `key` (AI.TENSORGET ... ENCODED), or of its blob.
std::size_t stored_size(Client& client, const std::string& key) {
  Reply reply = client.command({"AI.TENSORGET", key, "META", "BLOB", "ENCODED"});
  EXPECT_TRUE(reply.is_array()) << reply.string;
  if (!reply.is_array() || reply.elements.size() != 6) return 0;
  return reply.elements[5].string.size();
}

TEST_P(CompressedTensorTest, EveryLosslessOperatorAndDtypeRoundTripsThroughEveryRead) {
  for (const CompressionOperator& op : kLossless) {
    for (DType dtype : kDtypes) {
      const std::string name = unique(op.type + std::string(dtype_name(dtype)));
      const std::vector<std::byte> in = values(dtype);
      client().put_tensor(name, dtype, in.data(), in.size(), kShape, MemoryOrder::kC, op);
      const std::string where = op.type + " " + std::string(dtype_name(dtype));
      EXPECT_LT(stored_size(client(), name), in.size() / 2) << where;

      Tensor got = client().get_tensor(name);
      ASSERT_EQ(got.dtype(), dtype) << where;
      EXPECT_EQ(std::vector<std::int64_t>(got.shape().begin(), got.shape().end()), kShape);
      ASSERT_EQ(got.byte_size(), in.size());
      EXPECT_EQ(std::memcmp(got.bytes().data(), in.data(), in.size()), 0) << where;

      std::vector<std::byte> out(in.size());
      client().unpack_tensor(name, dtype, out.data(), out.size(), kShape);
      EXPECT_EQ(out, in) << where;

      // A RedisAI / SmartRedis client asks without ENCODED: the server decodes.
      Reply blob = client().command({"AI.TENSORGET", name, "META", "BLOB"});
      ASSERT_TRUE(blob.is_array() && blob.elements.size() == 6) << blob.string;
      EXPECT_EQ(blob.elements[4].string, "blob");
      ASSERT_EQ(blob.elements[5].string.size(), in.size());
      EXPECT_EQ(std::memcmp(blob.elements[5].string.data(), in.data(), in.size()), 0) << where;
    }
  }
}

TEST_P(CompressedTensorTest, FortranOrderBatchesAndValuesRoundTrip) {
  const CompressionOperator zstd{"zstd", {}};
  // A Fortran-order buffer: a(i, j) = 10 i + j, shape {3, 4}.
  const std::vector<std::int64_t> shape{3, 4};
  std::vector<double> fortran(12);
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 3; ++i) fortran[static_cast<std::size_t>(j * 3 + i)] = 10.0 * i + j;
  }
  const std::string f = unique("fortran");
  client().put_tensor(f, DType::kFloat64, fortran.data(), 96, shape, MemoryOrder::kFortran, zstd);
  Tensor got = client().get_tensor(f);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(got.data<double>()[static_cast<std::size_t>(i * 4 + j)], 10.0 * i + j);
    }
  }
  std::vector<double> back(12);
  client().unpack_tensor<double>(f, back, shape, MemoryOrder::kFortran);
  EXPECT_EQ(back, fortran);
  Reply listed = client().command({"AI.TENSORGET", f, "VALUES"});
  ASSERT_TRUE(listed.is_array() && listed.elements.size() == 12) << listed.string;
  EXPECT_EQ(listed.elements[5].string, "11");  // element [1][1]

  // A batch mixing compressed and raw tensors.
  const std::vector<float> a(1000, 1.5f), b(1000, -2.0f);
  const std::vector<std::int64_t> one{1000};
  const std::string ka = unique("a"), kb = unique("b");
  const CompressionOperator blosc{"blosc", {}};
  const TensorRef refs[] = {{ka, DType::kFloat32, a.data(), 4000, one, MemoryOrder::kC, &blosc},
                            {kb, DType::kFloat32, b.data(), 4000, one}};
  client().put_tensors(refs);
  EXPECT_LT(stored_size(client(), ka), 400u);
  EXPECT_EQ(stored_size(client(), kb), 4000u);
  const std::vector<std::string> names{ka, kb};
  std::vector<Tensor> both = client().get_tensors(names);
  EXPECT_EQ(std::vector<float>(both[0].data<float>().begin(), both[0].data<float>().end()), a);
  EXPECT_EQ(std::vector<float>(both[1].data<float>().begin(), both[1].data<float>().end()), b);
}

TEST_P(CompressedTensorTest, ZfpStaysWithinItsAccuracyElementByElement) {
  std::vector<double> field(kCount);
  for (std::size_t i = 0; i < kCount; ++i) field[i] = std::sin(0.01 * static_cast<double>(i));
  const std::string name = unique("zfp");
  const double accuracy = 1e-5;
  client().put_tensor(name, DType::kFloat64, field.data(), field.size() * 8, kShape,
                      MemoryOrder::kC, CompressionOperator{"zfp", {{"accuracy", "1e-5"}}});
  EXPECT_LT(stored_size(client(), name), field.size() * 8 / 2);
  Tensor got = client().get_tensor(name);
  double worst = 0;
  for (std::size_t i = 0; i < kCount; ++i) {
    worst = std::max(worst, std::abs(got.data<double>()[i] - field[i]));
  }
  EXPECT_GT(worst, 0.0);  // lossy: not the raw bytes sent back
  EXPECT_LE(worst, accuracy);
}

TEST_P(CompressedTensorTest, AScriptRunsOnTheDecodedElements) {
  const std::string script = unique("script"), ka = unique("a"), kb = unique("b");
  const std::vector<float> a(500, 2.0f), b(500, 0.5f);
  const std::vector<std::int64_t> shape{500};
  client().put_tensor(ka, DType::kFloat32, a.data(), 2000, shape, MemoryOrder::kC,
                      CompressionOperator{"zstd", {}});
  client().put_tensor(kb, DType::kFloat32, b.data(), 2000, shape, MemoryOrder::kC,
                      CompressionOperator{"bzip2", {}});
  client().set_script(script, "CPU", "def add_two(a, b):\n    return a + b\n");
  client().run_script(script, "add_two", {ka, kb}, {unique("sum")});
  Tensor sum = client().get_tensor(unique("sum"));
  for (float v : sum.data<float>()) ASSERT_EQ(v, 2.5f);
}

TEST_P(CompressedTensorTest, BadOperatorsAndForgedFramesAreErrors) {
  const std::vector<std::int32_t> ints(64, 7);
  const std::vector<std::int64_t> shape{64};
  std::string text = message_of<InvalidArgumentError>([&] {
    client().put_tensor(unique("ints"), DType::kInt32, ints.data(), 256, shape, MemoryOrder::kC,
                        CompressionOperator{"zfp", {{"accuracy", "0.1"}}});
  });
  EXPECT_NE(text.find(unique("ints")), std::string::npos) << text;
  text = message_of<InvalidArgumentError>([&] {
    client().put_tensor(unique("lzma"), DType::kInt32, ints.data(), 256, shape, MemoryOrder::kC,
                        CompressionOperator{"lzma", {}});
  });
  EXPECT_NE(text.find("lzma"), std::string::npos) << text;
  EXPECT_FALSE(client().tensor_exists(unique("ints")));

  // Frames the server must refuse: not a frame, and a real frame declared with another shape,
  // type or place.
  auto refused = [&](const std::vector<std::string>& words) {
    const std::vector<std::string_view> views(words.begin(), words.end());
    return message_of<ServerError>([&] { client().command(views); });
  };
  text = refused({"AI.TENSORSET", unique("forged"), "INT32", "64", "ENCODED", "BLOB",
                  std::string(100, 'x')});
  EXPECT_NE(text.find("no frame header"), std::string::npos) << text;
  const std::string real = unique("real");
  client().put_tensor(real, DType::kInt32, ints.data(), 256, shape, MemoryOrder::kC,
                      CompressionOperator{"zstd", {}});
  Reply frame = client().command({"AI.TENSORGET", real, "META", "BLOB", "ENCODED"});
  ASSERT_TRUE(frame.is_array() && frame.elements.size() == 6);
  EXPECT_EQ(frame.elements[4].string, "frame");
  text = refused({"AI.TENSORSET", unique("forged"), "INT32", "32", "ENCODED", "BLOB",
                  frame.elements[5].string});
  EXPECT_NE(text.find("shape needs 128"), std::string::npos) << text;
  text = refused({"AI.TENSORSET", unique("forged"), "FLOAT", "64", "ENCODED", "BLOB",
                  frame.elements[5].string});
  EXPECT_NE(text.find("INT32"), std::string::npos) << text;
  text = refused({"AI.TENSORSET", unique("forged"), "INT32", "64", "ENCODED", "VALUES", "1"});
  EXPECT_NE(text.find("ENCODED must come just before BLOB"), std::string::npos) << text;
  EXPECT_FALSE(client().tensor_exists(unique("forged")));
}

// The compressed bytes go into the snapshot as they are and come back after a restart.
TEST(CompressedTensors, SurviveASnapshotAndARestart) {
  const std::string dir = make_temp_dir("compressed-snapshot");
  std::vector<double> field(kCount);
  for (std::size_t i = 0; i < kCount; ++i) field[i] = static_cast<double>(i % 50);
  std::size_t before = 0;
  {
    ServerProcess server({}, dir);
    Client client(server.unix_address());
    client.put_tensor("kept", DType::kFloat64, field.data(), field.size() * 8, kShape,
                      MemoryOrder::kC, CompressionOperator{"zstd", {}});
    before = stored_size(client, "kept");
    client.command({"SAVE"});
  }
  {
    ServerProcess server({}, dir);
    Client client(server.tcp_address());
    EXPECT_EQ(stored_size(client, "kept"), before);
    Tensor got = client.get_tensor("kept");
    EXPECT_EQ(std::vector<double>(got.data<double>().begin(), got.data<double>().end()), field);
  }
  std::filesystem::remove_all(dir);
}

// A compressed tensor takes its frame's size against --maxmemory; decoding it in the server (for
// a client that cannot take frames) counts its elements while they live, so a small frame of a
// large tensor cannot take the server past its limit: OOM for that reader, while a Slipstream
// client, which decodes itself, still gets it.
TEST(CompressedTensors, ServerDecodesCountAgainstMaxmemory) {
  ServerProcess server({"--maxmemory", std::to_string(16 << 20)});
  Client client(server.unix_address());
  const std::vector<float> zeros(8 << 20, 0.0f);  // 32 MiB of elements, a frame of a few KiB
  const std::vector<std::int64_t> shape{static_cast<std::int64_t>(zeros.size())};
  client.put_tensor("zeros", DType::kFloat32, zeros.data(), zeros.size() * 4, shape,
                    MemoryOrder::kC, CompressionOperator{"zstd", {}});
  EXPECT_LT(stored_size(client, "zeros"), std::size_t{1} << 20);
  const std::string text = message_of<ServerError>(
      [&] { client.command({"AI.TENSORGET", "zeros", "META", "BLOB"}); });
  EXPECT_NE(text.find("OOM"), std::string::npos) << text;
  Tensor got = client.get_tensor("zeros");
  ASSERT_EQ(got.size(), zeros.size());
  EXPECT_EQ(got.data<float>()[12345], 0.0f);
}

}  // namespace
}  // namespace slipstream::testing

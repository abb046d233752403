// The compression operators (src/codec): every operator round-trips every type it takes (lossless
// exactly, zfp within its bound element by element), bad parameters are refused naming the
// parameter, and a damaged frame is an error naming the component, never wrong numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "codec/codec.hpp"

namespace slipstream::codec {
namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

// A smooth field with noise (what a simulation's mesh looks like), as `dtype`.
std::vector<std::byte> field_bytes(DType dtype, std::size_t count, unsigned seed = 7) {
  std::mt19937 random(seed);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<std::byte> bytes(count * dtype_size(dtype));
  for (std::size_t i = 0; i < count; ++i) {
    const double x = std::sin(0.01 * static_cast<double>(i)) * 100.0 + noise(random);
    std::byte* at = bytes.data() + i * dtype_size(dtype);
    auto put = [&](auto value) { std::memcpy(at, &value, sizeof value); };
    switch (dtype) {
      case DType::kFloat32: put(static_cast<float>(x)); break;
      case DType::kFloat64: put(x); break;
      case DType::kInt8: put(static_cast<std::int8_t>(static_cast<int>(x) % 100)); break;
      case DType::kInt16: put(static_cast<std::int16_t>(x)); break;
      case DType::kInt32: put(static_cast<std::int32_t>(x * 1000)); break;
      case DType::kInt64: put(static_cast<std::int64_t>(x * 1e6)); break;
      case DType::kUInt8: put(static_cast<std::uint8_t>(static_cast<int>(x + 100) % 256)); break;
      case DType::kUInt16: put(static_cast<std::uint16_t>(x + 100)); break;
      case DType::kBool: put(static_cast<std::uint8_t>(x > 0 ? 1 : 0)); break;
      case DType::kUInt32: put(static_cast<std::uint32_t>((x + 100) * 1000)); break;
      case DType::kUInt64: put(static_cast<std::uint64_t>((x + 100) * 1e6)); break;
    }
  }
  return bytes;
}

const std::vector<DType> kAllTypes = {DType::kFloat32, DType::kFloat64, DType::kInt8,
                                      DType::kInt16,   DType::kInt32,   DType::kInt64,
                                      DType::kUInt8,   DType::kUInt16,  DType::kBool,
                                      DType::kUInt32,  DType::kUInt64};

TEST(Codec, LosslessOperatorsRoundTripEveryTypeExactly) {
  const std::vector<std::pair<std::string, Params>> operators = {
      {"zstd", {}},
      {"zstd", {{"level", "19"}}},
      {"blosc", {}},
      {"blosc", {{"clevel", "9"}, {"doshuffle", "BLOSC_BITSHUFFLE"}, {"compressor", "lz4"}}},
      {"blosc", {{"doshuffle", "BLOSC_NOSHUFFLE"}, {"compressor", "zstd"}}},
      {"blosc", {{"compressor", "zlib"}}},
      {"bzip2", {}},
      {"bzip2", {{"blockSize100k", "1"}}},
  };
  const std::vector<std::uint64_t> extent = {30, 41};  // not a multiple of any block size
  for (const auto& [type, params] : operators) {
    const Operator op = make_operator(type, params);
    for (DType dtype : kAllTypes) {
      const std::vector<std::byte> raw = field_bytes(dtype, 30 * 41);
      const std::vector<std::byte> frame = encode(op, dtype, extent, raw, "component 'E/x'");
      EXPECT_TRUE(is_frame(frame));
      const FrameInfo info = inspect(frame, "component 'E/x'");
      EXPECT_EQ(info.op.codec, op.codec);
      EXPECT_EQ(describe(info.op), describe(op));
      EXPECT_EQ(info.dtype, dtype);
      EXPECT_EQ(info.raw_bytes, raw.size());
      std::vector<std::byte> out(raw.size());
      decode(frame, dtype, extent, out, "component 'E/x'");
      EXPECT_EQ(out, raw) << describe(op) << " " << dtype_name(dtype);
    }
  }
}

TEST(Codec, LosslessOperatorsShrinkRepetitiveData) {
  const std::vector<std::byte> raw(1 << 20, std::byte{42});
  const std::vector<std::uint64_t> extent = {1 << 20};
  for (const char* type : {"zstd", "blosc", "bzip2"}) {
    const std::vector<std::byte> frame = encode(make_operator(type, {}), DType::kUInt8, extent, raw, "x");
    EXPECT_LT(frame.size(), raw.size() / 50) << type;
  }
}

TEST(Codec, ZfpKeepsItsAccuracyElementByElementIn1To4Dimensions) {
  const std::vector<std::vector<std::uint64_t>> extents = {{1000}, {37, 29}, {9, 11, 13}, {5, 6, 7, 8}};
  for (double accuracy : {1e-1, 1e-3, 1e-5}) {
    const Operator op = make_operator("zfp", {{"accuracy", std::to_string(accuracy)}});
    for (const auto& extent : extents) {
      std::uint64_t count = 1;
      for (auto n : extent) count *= n;
      for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
        const std::vector<std::byte> raw = field_bytes(dtype, count);
        const std::vector<std::byte> frame = encode(op, dtype, extent, raw, "rho");
        std::vector<std::byte> out(raw.size());
        decode(frame, dtype, extent, out, "rho");
        const double error = max_abs_difference(dtype, raw, out);
        // float32 values near 100 carry about 1e-5 of rounding of their own.
        const double bound = dtype == DType::kFloat32 ? std::max(accuracy, 2e-5) : accuracy;
        EXPECT_LE(error, bound) << describe(op) << " " << dtype_name(dtype) << " " << extent.size()
                                << " dimensions";
      }
    }
  }
}

TEST(Codec, ZfpShrinksASmoothField) {
  const std::vector<std::uint64_t> extent = {128, 128};
  std::vector<double> values(128 * 128);
  for (std::size_t i = 0; i < 128; ++i) {
    for (std::size_t j = 0; j < 128; ++j) values[i * 128 + j] = std::sin(0.05 * i) * std::cos(0.03 * j);
  }
  const std::span<const std::byte> raw(reinterpret_cast<const std::byte*>(values.data()),
                                       values.size() * sizeof(double));
  const std::vector<std::byte> frame =
      encode(make_operator("zfp", {{"accuracy", "1e-4"}}), DType::kFloat64, extent, raw, "E");
  EXPECT_LT(frame.size(), raw.size() / 4);
}

// Values far below the accuracy (a field before an instability has grown) encode to little more
// than zfp's header: 64 of them to a payload of 14 bytes, not a whole number of the 64-bit words
// zfp reads (its decoder refused it, and read past it). They must decode, to within the accuracy,
// from any address (a frame received on a socket is not where the writer had it).
TEST(Codec, ZfpDecodesValuesBelowItsAccuracyFromAnyAddress) {
  for (const auto& [count, scale] : std::vector<std::pair<std::size_t, double>>{
           {64, 0.0}, {64, 1e-6}, {8192, 0.0}, {8192, 1e-9}, {8192, 1e-6}}) {
    std::vector<double> values(count);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = scale * std::sin(0.01 * i);
    const std::vector<std::uint64_t> extent = {values.size()};
    const std::span<const std::byte> raw(reinterpret_cast<const std::byte*>(values.data()),
                                         values.size() * sizeof(double));
    const std::vector<std::byte> frame =
        encode(make_operator("zfp", {{"accuracy", "1e-5"}}), DType::kFloat64, extent, raw, "E");
    for (std::size_t shift = 0; shift < 8; ++shift) {
      std::vector<std::byte> moved(frame.size() + shift + 8);
      std::memcpy(moved.data() + shift, frame.data(), frame.size());
      std::vector<double> out(values.size(), -1.0);
      decode({moved.data() + shift, frame.size()}, DType::kFloat64, extent,
             {reinterpret_cast<std::byte*>(out.data()), out.size() * sizeof(double)}, "E");
      for (std::size_t i = 0; i < values.size(); ++i) {
        ASSERT_LE(std::abs(out[i] - values[i]), 1e-5) << "scale " << scale << " shift " << shift;
      }
    }
  }
}

TEST(Codec, ZfpPrecisionAndRateModesRoundTrip) {
  const std::vector<std::uint64_t> extent = {64, 64};
  const std::vector<std::byte> raw = field_bytes(DType::kFloat64, 64 * 64);
  for (const Params& params : {Params{{"precision", "40"}}, Params{{"rate", "16"}}}) {
    const Operator op = make_operator("zfp", params);
    const std::vector<std::byte> frame = encode(op, DType::kFloat64, extent, raw, "E");
    std::vector<std::byte> out(raw.size());
    decode(frame, DType::kFloat64, extent, out, "E");
    EXPECT_LT(max_abs_difference(DType::kFloat64, raw, out), 1.0) << describe(op);
    if (params[0].first == "rate") {  // 16 bits a value: a quarter of float64, plus the header
      EXPECT_LE(frame.size(), raw.size() / 4 + 200);
    }
  }
}

TEST(Codec, EmptyArraysRoundTrip) {
  const std::vector<std::uint64_t> extent = {0, 5};
  for (const char* type : {"zstd", "blosc", "bzip2"}) {
    const std::vector<std::byte> frame =
        encode(make_operator(type, {}), DType::kFloat32, extent, {}, "empty");
    std::vector<std::byte> out;
    decode(frame, DType::kFloat32, extent, out, "empty");
  }
  const std::vector<std::byte> frame =
      encode(make_operator("zfp", {{"rate", "8"}}), DType::kFloat32, extent, {}, "empty");
  std::vector<std::byte> out;
  decode(frame, DType::kFloat32, extent, out, "empty");
}

// The message of what `call` throws, or "" when it throws nothing.
template <typename Call>
std::string error_of(Call call) {
  try {
    call();
  } catch (const CodecError& e) {
    return e.what();
  }
  return "";
}

TEST(Codec, BadParametersAreRefusedNamingThem) {
  auto refused = [](const char* type, Params params) {
    return error_of([&] { make_operator(type, params); });
  };
  EXPECT_NE(refused("sz", {}).find("zstd, blosc, bzip2 and zfp"), std::string::npos);
  EXPECT_NE(refused("zfp", {}).find("accuracy, precision or rate"), std::string::npos);
  EXPECT_NE(refused("zfp", {{"accuracy", "0"}}).find("'accuracy'"), std::string::npos);
  EXPECT_NE(refused("zfp", {{"accuracy", "-1"}}).find("above 0"), std::string::npos);
  EXPECT_NE(refused("zfp", {{"accuracy", "nan"}}).find("not a number"), std::string::npos);
  EXPECT_NE(refused("zfp", {{"accuracy", "1e-3"}, {"rate", "8"}}).find("one of"), std::string::npos);
  EXPECT_NE(refused("zfp", {{"precision", "65"}}).find("1 to 64"), std::string::npos);
  EXPECT_NE(refused("zfp", {{"rate", "0"}}).find("'rate'"), std::string::npos);
  EXPECT_NE(refused("zstd", {{"level", "30"}}).find("from 1 to 19"), std::string::npos);
  EXPECT_NE(refused("zstd", {{"level", "three"}}).find("not a number"), std::string::npos);
  EXPECT_NE(refused("blosc", {{"clevel", "10"}}).find("'clevel'"), std::string::npos);
  EXPECT_NE(refused("blosc", {{"doshuffle", "sideways"}}).find("BLOSC_SHUFFLE"), std::string::npos);
  EXPECT_NE(refused("blosc", {{"compressor", "lzma"}}).find("blosclz"), std::string::npos);
  EXPECT_NE(refused("bzip2", {{"blockSize100k", "0"}}).find("from 1 to 9"), std::string::npos);
  EXPECT_NE(refused("bzip2", {{"accuracy", "1"}}).find("not a parameter"), std::string::npos);
  EXPECT_EQ(refused("ZSTD", {{"Level", "1"}}), "");  // names as ADIOS2 users write them
}

TEST(Codec, ZfpRefusesIntegersAndMoreThanFourDimensionsNamingTheComponent) {
  const Operator op = make_operator("zfp", {{"accuracy", "1e-4"}});
  const std::vector<std::byte> ints = field_bytes(DType::kInt32, 100);
  const std::vector<std::uint64_t> extent = {100};
  const std::string integers = error_of([&] { encode(op, DType::kInt32, extent, ints, "particles 'e/id'"); });
  EXPECT_NE(integers.find("particles 'e/id'"), std::string::npos) << integers;
  EXPECT_NE(integers.find("INT32"), std::string::npos) << integers;
  const std::vector<std::byte> doubles = field_bytes(DType::kFloat64, 32);
  const std::vector<std::uint64_t> five = {2, 2, 2, 2, 2};
  EXPECT_NE(error_of([&] { encode(op, DType::kFloat64, five, doubles, "E"); }).find("1 to 4 dimensions"),
            std::string::npos);
  // A buffer that is not the extent's size.
  const std::vector<std::uint64_t> wrong = {33};
  EXPECT_NE(error_of([&] { encode(op, DType::kFloat64, wrong, doubles, "E"); }).find("not the extent"),
            std::string::npos);
}

TEST(Codec, DamagedFramesAreErrorsNeverWrongNumbers) {
  const std::vector<std::uint64_t> extent = {4096};
  const std::vector<std::byte> raw = field_bytes(DType::kFloat64, 4096);
  for (const auto& [type, params] :
       std::vector<std::pair<std::string, Params>>{{"zstd", {}}, {"blosc", {}}, {"bzip2", {}},
                                                   {"zfp", {{"accuracy", "1e-6"}}}}) {
    const std::vector<std::byte> frame = encode(make_operator(type, params), DType::kFloat64, extent, raw, "E/x");
    std::vector<std::byte> out(raw.size());
    // Every byte of the payload flipped in turn (a sample), the header's bytes, and truncations.
    for (std::size_t at = 0; at < frame.size(); at += std::max<std::size_t>(1, frame.size() / 97)) {
      std::vector<std::byte> damaged = frame;
      damaged[at] ^= std::byte{0x10};
      const std::string error = error_of([&] { decode(damaged, DType::kFloat64, extent, out, "E/x"); });
      EXPECT_NE(error.find("E/x"), std::string::npos) << type << " byte " << at << ": " << error;
    }
    for (std::size_t keep : {std::size_t{0}, std::size_t{10}, std::size_t{40}, frame.size() / 2, frame.size() - 1}) {
      const std::span<const std::byte> cut(frame.data(), keep);
      EXPECT_NE(error_of([&] { decode(cut, DType::kFloat64, extent, out, "E/x"); }), "")
          << type << " cut to " << keep;
    }
    // The right frame for another type or extent.
    const std::vector<std::uint64_t> other = {2048};
    std::vector<std::byte> half(raw.size() / 2);
    EXPECT_NE(error_of([&] { decode(frame, DType::kFloat64, other, half, "E/x"); }).find("extent"),
              std::string::npos);
    std::vector<std::byte> as_int(raw.size());
    EXPECT_NE(error_of([&] { decode(frame, DType::kInt64, extent, as_int, "E/x"); }).find("DOUBLE"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace slipstream::codec

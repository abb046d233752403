// Compression operators for stream chunks and tensors (issue 31): lossless zstd, blosc (with its
// shuffle) and bzip2, and lossy zfp (fixed accuracy, precision or rate) for float32 / float64
// arrays of 1-4 dimensions. They run on the writer and reader ranks; what travels and what the
// server stores is a frame: a header naming the operator and its parameters, the raw size and a
// checksum of the encoded bytes, then the codec's output. Decoding checks all of it, so a corrupt
// or truncated chunk is an error naming the component, never wrong numbers.
//
// Frame (little-endian, 40 bytes of header):
//   "SSCF" | u8 version (1) | u8 codec | u8 dtype | u8 level | u8 compressor | u8 shuffle |
//   u8 zfp mode | u8 0 | f64 zfp value | u64 raw bytes | u64 CRC-64 of the payload | payload
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slipstream/tensor.hpp"

namespace slipstream::codec {

/// Bad parameters, an operator that does not fit the data, or a frame that fails its checks.
class CodecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Codec : std::uint8_t { kZstd = 1, kBlosc = 2, kBzip2 = 3, kZfp = 4 };
enum class ZfpMode : std::uint8_t { kNone = 0, kAccuracy = 1, kPrecision = 2, kRate = 3 };
/// blosc's inner compressors, numbered as blosc numbers them.
enum class BloscCompressor : std::uint8_t { kBloscLz = 0, kLz4 = 1, kLz4Hc = 2, kSnappy = 3, kZlib = 4, kZstd = 5 };
enum class Shuffle : std::uint8_t { kNone = 0, kByte = 1, kBit = 2 };

/// An operator and its parameters.
struct Operator {
  Codec codec = Codec::kZstd;
  /// zstd: 1-19 (default 3); blosc: clevel 0-9 (default 5); bzip2: blockSize100k 1-9 (default 9).
  int level = 3;
  BloscCompressor compressor = BloscCompressor::kBloscLz;
  Shuffle shuffle = Shuffle::kByte;
  ZfpMode zfp_mode = ZfpMode::kNone;
  /// accuracy: the largest absolute error allowed (> 0); precision: bits kept per value (1-64);
  /// rate: bits per value (> 0, at most the type's width).
  double zfp_value = 0;

  bool lossless() const noexcept { return codec != Codec::kZfp; }
};

/// The operator `type` ("zstd", "blosc", "bzip2", "zfp") with parameters as openPMD-api users
/// write them for ADIOS2 (`adios2.dataset.operators`): zstd `level` (or `clevel`); blosc `clevel`,
/// `doshuffle` (BLOSC_SHUFFLE, BLOSC_NOSHUFFLE, BLOSC_BITSHUFFLE) and `compressor` (blosclz, lz4,
/// lz4hc, snappy, zlib, zstd); bzip2 `blockSize100k`; zfp one of `accuracy`, `precision`, `rate`.
/// Throws CodecError naming the operator and the parameter for an unknown name, a value out of
/// range, a zfp without exactly one mode, or a parameter the operator does not take. Operators
/// ADIOS2 has and this does not (sz, mgard, png, ...) are refused with the list of those there are.
Operator make_operator(std::string_view type,
                       const std::vector<std::pair<std::string, std::string>>& parameters);

/// "zstd(level=3)", "zfp(accuracy=0.0001)", ... (what a frame records, for messages and logs).
std::string describe(const Operator& op);

/// Encodes `raw` (an array of `dtype` with `extent`, C order) into a frame. `what` names the data
/// in errors (e.g. "component 'E/x'"). Throws CodecError when the operator does not fit (zfp on
/// integer data or more than 4 dimensions; sizes past a codec's limit).
std::vector<std::byte> encode(const Operator& op, DType dtype, std::span<const std::uint64_t> extent,
                              std::span<const std::byte> raw, std::string_view what);

/// What a frame says of itself. Throws CodecError when it is not a frame.
struct FrameInfo {
  Operator op;
  DType dtype = DType::kFloat32;
  std::uint64_t raw_bytes = 0;
  std::uint64_t payload_bytes = 0;
};
FrameInfo inspect(std::span<const std::byte> frame, std::string_view what);

/// True when `bytes` start like a frame (its magic); inspect() does the checks.
bool is_frame(std::span<const std::byte> bytes) noexcept;

/// Decodes `frame` into `out`, which must be exactly the frame's raw size, for an array of `dtype`
/// with `extent`. Throws CodecError naming `what` when the frame is truncated, its checksum fails,
/// its dtype or size differ from what is expected, or the codec reports an error or a decoded size
/// other than the raw size.
void decode(std::span<const std::byte> frame, DType dtype, std::span<const std::uint64_t> extent,
            std::span<std::byte> out, std::string_view what);

/// The largest absolute difference between two float32 or float64 arrays of the same size (what a
/// lossy operator's bound is checked against); throws CodecError for other types or sizes.
double max_abs_difference(DType dtype, std::span<const std::byte> a, std::span<const std::byte> b);

}  // namespace slipstream::codec

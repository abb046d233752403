// Operators from their openPMD-api / ADIOS2 names and parameters, and the frame around a codec's
// output (codec.hpp): written on encode, checked on decode before the codec sees a byte.
#include "codec/codec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "codec/codecs.hpp"
#include "common/crc64.hpp"

namespace slipstream::codec {
namespace {

constexpr char kMagic[4] = {'S', 'S', 'C', 'F'};
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 40;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

[[noreturn]] void bad(std::string_view type, std::string_view name, const std::string& why) {
  throw CodecError("operator '" + std::string(type) + "', parameter '" + std::string(name) +
                   "': " + why);
}

double number(std::string_view type, std::string_view name, const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value)) {
    bad(type, name, "'" + text + "' is not a number");
  }
  return value;
}

int integer_in(std::string_view type, std::string_view name, const std::string& text, int low,
               int high) {
  const double value = number(type, name, text);
  if (value != std::floor(value) || value < low || value > high) {
    bad(type, name, text + " is not an integer from " + std::to_string(low) + " to " +
                        std::to_string(high));
  }
  return static_cast<int>(value);
}

std::string number_text(double value) {
  // The shortest form that reads back the same (17 digits always do).
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

void put_u64(std::byte* at, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}
std::uint64_t get_u64(const std::byte* at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<std::uint64_t>(at[i]) << (8 * i);
  return value;
}

std::uint64_t checksum(std::span<const std::byte> bytes) {
  return crc64(0, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::uint64_t element_count(std::span<const std::uint64_t> extent) {
  std::uint64_t count = 1;
  for (std::uint64_t size : extent) {
    if (size != 0 && count > std::numeric_limits<std::uint64_t>::max() / size) {
      throw CodecError("an extent whose element count overflows");
    }
    count *= size;
  }
  return count;
}

}  // namespace

Operator make_operator(std::string_view type_name,
                       const std::vector<std::pair<std::string, std::string>>& parameters) {
  const std::string type = lower(type_name);
  Operator op;
  if (type == "zstd") {
    op.codec = Codec::kZstd;
    op.level = 3;
  } else if (type == "blosc") {
    op.codec = Codec::kBlosc;
    op.level = 5;
  } else if (type == "bzip2") {
    op.codec = Codec::kBzip2;
    op.level = 9;
  } else if (type == "zfp") {
    op.codec = Codec::kZfp;
    op.level = 0;
  } else {
    throw CodecError("operator '" + std::string(type_name) +
                     "' is not available: the operators are zstd, blosc, bzip2 and zfp (ADIOS2's "
                     "sz, mgard and png are not)");
  }
  for (const auto& [name_given, value] : parameters) {
    const std::string name = lower(name_given);
    if (op.codec == Codec::kZstd && (name == "level" || name == "clevel")) {
      op.level = integer_in(type, name_given, value, 1, 19);
    } else if (op.codec == Codec::kBlosc && name == "clevel") {
      op.level = integer_in(type, name_given, value, 0, 9);
    } else if (op.codec == Codec::kBlosc && name == "doshuffle") {
      const std::string v = lower(value);
      if (v == "blosc_shuffle" || v == "shuffle" || v == "1") {
        op.shuffle = Shuffle::kByte;
      } else if (v == "blosc_noshuffle" || v == "noshuffle" || v == "0") {
        op.shuffle = Shuffle::kNone;
      } else if (v == "blosc_bitshuffle" || v == "bitshuffle" || v == "2") {
        op.shuffle = Shuffle::kBit;
      } else {
        bad(type, name_given, "'" + value + "' is not BLOSC_SHUFFLE, BLOSC_NOSHUFFLE or BLOSC_BITSHUFFLE");
      }
    } else if (op.codec == Codec::kBlosc && name == "compressor") {
      const std::string v = lower(value);
      const auto& names = detail::kBloscCompressors;
      auto found = std::find(std::begin(names), std::end(names), v);
      if (found == std::end(names)) {
        bad(type, name_given, "'" + value + "' is not blosclz, lz4, lz4hc, snappy, zlib or zstd");
      }
      op.compressor = static_cast<BloscCompressor>(found - std::begin(names));
    } else if (op.codec == Codec::kBzip2 && name == "blocksize100k") {
      op.level = integer_in(type, name_given, value, 1, 9);
    } else if (op.codec == Codec::kZfp &&
               (name == "accuracy" || name == "precision" || name == "rate")) {
      if (op.zfp_mode != ZfpMode::kNone) {
        bad(type, name_given, "zfp takes one of accuracy, precision and rate");
      }
      const double v = number(type, name_given, value);
      if (name == "accuracy") {
        if (!(v > 0)) bad(type, name_given, "the accuracy (largest error allowed) must be above 0");
        op.zfp_mode = ZfpMode::kAccuracy;
      } else if (name == "precision") {
        if (v != std::floor(v) || v < 1 || v > 64) bad(type, name_given, "the precision is 1 to 64 bits");
        op.zfp_mode = ZfpMode::kPrecision;
      } else {
        if (!(v > 0) || v > 64) bad(type, name_given, "the rate is above 0 and at most 64 bits a value");
        op.zfp_mode = ZfpMode::kRate;
      }
      op.zfp_value = v;
    } else {
      bad(type, name_given, "not a parameter of this operator");
    }
  }
  if (op.codec == Codec::kZfp && op.zfp_mode == ZfpMode::kNone) {
    throw CodecError("operator 'zfp' needs one of accuracy, precision or rate");
  }
  return op;
}

std::string describe(const Operator& op) {
  switch (op.codec) {
    case Codec::kZstd: return "zstd(level=" + std::to_string(op.level) + ")";
    case Codec::kBzip2: return "bzip2(blockSize100k=" + std::to_string(op.level) + ")";
    case Codec::kBlosc: {
      static const char* const kShuffles[] = {"noshuffle", "shuffle", "bitshuffle"};
      return "blosc(clevel=" + std::to_string(op.level) + ", compressor=" +
             detail::kBloscCompressors[static_cast<int>(op.compressor) % 6] + ", " +
             kShuffles[static_cast<int>(op.shuffle) % 3] + ")";
    }
    case Codec::kZfp: {
      const char* mode = op.zfp_mode == ZfpMode::kAccuracy    ? "accuracy"
                         : op.zfp_mode == ZfpMode::kPrecision ? "precision"
                                                               : "rate";
      return std::string("zfp(") + mode + "=" + number_text(op.zfp_value) + ")";
    }
  }
  return "unknown";
}

bool is_frame(std::span<const std::byte> bytes) noexcept {
  return bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, sizeof kMagic) == 0;
}

std::vector<std::byte> encode(const Operator& op, DType dtype, std::span<const std::uint64_t> extent,
                              std::span<const std::byte> raw, std::string_view what) {
  if (element_count(extent) * dtype_size(dtype) != raw.size()) {
    throw CodecError(std::string(what) + ": " + std::to_string(raw.size()) +
                     " bytes are not the extent's " + std::to_string(element_count(extent)) +
                     " elements of " + std::string(dtype_name(dtype)));
  }
  std::vector<std::byte> frame(kHeaderBytes);
  if (!raw.empty()) {
    switch (op.codec) {
      case Codec::kZstd: detail::zstd_encode(op, raw, frame); break;
      case Codec::kBlosc: detail::blosc_encode(op, dtype_size(dtype), raw, frame, what); break;
      case Codec::kBzip2: detail::bzip2_encode(op, raw, frame, what); break;
      case Codec::kZfp: detail::zfp_encode(op, dtype, extent, raw, frame, what); break;
    }
  } else if (op.codec == Codec::kZfp) {
    detail::zfp_encode(op, dtype, extent, raw, frame, what);  // refuses integers and > 4 dims
  }
  std::memcpy(frame.data(), kMagic, sizeof kMagic);
  frame[4] = std::byte{kVersion};
  frame[5] = static_cast<std::byte>(op.codec);
  frame[6] = static_cast<std::byte>(dtype);
  frame[7] = static_cast<std::byte>(op.level);
  frame[8] = static_cast<std::byte>(op.compressor);
  frame[9] = static_cast<std::byte>(op.shuffle);
  frame[10] = static_cast<std::byte>(op.zfp_mode);
  frame[11] = std::byte{0};
  std::uint64_t bits = 0;
  std::memcpy(&bits, &op.zfp_value, sizeof bits);
  put_u64(frame.data() + 12, bits);
  put_u64(frame.data() + 20, raw.size());
  put_u64(frame.data() + 28, checksum(std::span(frame).subspan(kHeaderBytes)));
  // Bytes 36-39 hold the header's own check: the first 36 bytes' CRC-64, low half.
  const std::uint64_t header_check = checksum(std::span(frame).first(36));
  for (int i = 0; i < 4; ++i) frame[36 + i] = static_cast<std::byte>((header_check >> (8 * i)) & 0xff);
  return frame;
}

FrameInfo inspect(std::span<const std::byte> frame, std::string_view what) {
  const std::string prefix(what);
  if (frame.size() < kHeaderBytes || !is_frame(frame)) {
    throw CodecError(prefix + ": not an encoded chunk (" + std::to_string(frame.size()) +
                     " bytes, no frame header)");
  }
  const std::uint64_t header_check = checksum(frame.first(36));
  for (int i = 0; i < 4; ++i) {
    if (frame[36 + i] != static_cast<std::byte>((header_check >> (8 * i)) & 0xff)) {
      throw CodecError(prefix + ": the encoded chunk's header is corrupt (checksum)");
    }
  }
  if (frame[4] != std::byte{kVersion}) {
    throw CodecError(prefix + ": an encoded chunk of version " +
                     std::to_string(static_cast<int>(frame[4])) + " (this build reads version 1)");
  }
  FrameInfo info;
  const auto codec = static_cast<int>(frame[5]);
  if (codec < 1 || codec > 4) throw CodecError(prefix + ": an encoded chunk of unknown operator " + std::to_string(codec));
  info.op.codec = static_cast<Codec>(codec);
  const auto dtype = static_cast<int>(frame[6]);
  if (dtype > static_cast<int>(DType::kUInt64)) throw CodecError(prefix + ": an encoded chunk of unknown type");
  info.dtype = static_cast<DType>(dtype);
  info.op.level = static_cast<int>(frame[7]);
  info.op.compressor = static_cast<BloscCompressor>(std::min(static_cast<int>(frame[8]), 5));
  info.op.shuffle = static_cast<Shuffle>(std::min(static_cast<int>(frame[9]), 2));
  info.op.zfp_mode = static_cast<ZfpMode>(std::min(static_cast<int>(frame[10]), 3));
  const std::uint64_t bits = get_u64(frame.data() + 12);
  std::memcpy(&info.op.zfp_value, &bits, sizeof bits);
  info.raw_bytes = get_u64(frame.data() + 20);
  info.payload_bytes = frame.size() - kHeaderBytes;
  return info;
}

void decode(std::span<const std::byte> frame, DType dtype, std::span<const std::uint64_t> extent,
            std::span<std::byte> out, std::string_view what) {
  const FrameInfo info = inspect(frame, what);
  const std::string prefix(what);
  if (info.dtype != dtype) {
    throw CodecError(prefix + ": the encoded chunk holds " + std::string(dtype_name(info.dtype)) +
                     ", not " + std::string(dtype_name(dtype)));
  }
  const std::uint64_t expected = element_count(extent) * dtype_size(dtype);
  if (info.raw_bytes != expected || out.size() != expected) {
    throw CodecError(prefix + ": the encoded chunk decodes to " + std::to_string(info.raw_bytes) +
                     " bytes, the extent holds " + std::to_string(expected));
  }
  const std::span<const std::byte> payload = frame.subspan(kHeaderBytes);
  if (checksum(payload) != get_u64(frame.data() + 28)) {
    throw CodecError(prefix + ": the encoded chunk is corrupt or truncated (checksum of its " +
                     std::to_string(payload.size()) + " bytes)");
  }
  if (expected == 0) return;
  switch (info.op.codec) {
    case Codec::kZstd: return detail::zstd_decode(payload, out, what);
    case Codec::kBlosc: return detail::blosc_decode(payload, out, what);
    case Codec::kBzip2: return detail::bzip2_decode(payload, out, what);
    case Codec::kZfp: return detail::zfp_decode(dtype, extent, payload, out, what);
  }
}

namespace {
template <typename T>
double max_difference_of(std::span<const std::byte> a, std::span<const std::byte> b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size() / sizeof(T); ++i) {
    T x, y;
    std::memcpy(&x, a.data() + i * sizeof(T), sizeof(T));
    std::memcpy(&y, b.data() + i * sizeof(T), sizeof(T));
    worst = std::max(worst, std::abs(static_cast<double>(x) - static_cast<double>(y)));
  }
  return worst;
}
}  // namespace

double max_abs_difference(DType dtype, std::span<const std::byte> a, std::span<const std::byte> b) {
  if (a.size() != b.size()) throw CodecError("arrays of different sizes");
  if (dtype == DType::kFloat32) return max_difference_of<float>(a, b);
  if (dtype == DType::kFloat64) return max_difference_of<double>(a, b);
  throw CodecError("differences are measured on FLOAT and DOUBLE arrays only");
}

}  // namespace slipstream::codec

// zstd, blosc, bzip2 and zfp over byte buffers (see codecs.hpp). Every length a codec reports is
// checked against what the frame says, so a codec that decodes less or more than the raw size is
// an error rather than a short or overrun array.
#include "codec/codecs.hpp"

#include <blosc.h>
#include <bzlib.h>
#include <zfp.h>
#include <zstd.h>

#include <climits>
#include <cstring>
#include <memory>
#include <string>

namespace slipstream::codec::detail {
namespace {

[[noreturn]] void fail(std::string_view what, const std::string& why) {
  throw CodecError(std::string(what) + ": " + why);
}

}  // namespace

// ---- zstd

void zstd_encode(const Operator& op, std::span<const std::byte> raw, std::vector<std::byte>& out) {
  const std::size_t start = out.size();
  out.resize(start + ZSTD_compressBound(raw.size()));
  const std::size_t size =
      ZSTD_compress(out.data() + start, out.size() - start, raw.data(), raw.size(), op.level);
  if (ZSTD_isError(size)) throw CodecError(std::string("zstd: ") + ZSTD_getErrorName(size));
  out.resize(start + size);
}

void zstd_decode(std::span<const std::byte> payload, std::span<std::byte> out, std::string_view what) {
  const unsigned long long content = ZSTD_getFrameContentSize(payload.data(), payload.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) fail(what, "not a zstd frame");
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != out.size()) {
    fail(what, "the zstd frame holds " + std::to_string(content) + " bytes, not " +
                   std::to_string(out.size()));
  }
  const std::size_t size = ZSTD_decompress(out.data(), out.size(), payload.data(), payload.size());
  if (ZSTD_isError(size)) fail(what, std::string("zstd: ") + ZSTD_getErrorName(size));
  if (size != out.size()) {
    fail(what, "zstd decoded " + std::to_string(size) + " bytes, not " + std::to_string(out.size()));
  }
}

// ---- blosc (the thread-safe *_ctx calls: no global state, one internal thread)

void blosc_encode(const Operator& op, std::size_t type_size, std::span<const std::byte> raw,
                  std::vector<std::byte>& out, std::string_view what) {
  if (raw.size() > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE)) {
    fail(what, std::to_string(raw.size()) + " bytes are more than blosc takes at once (" +
                   std::to_string(BLOSC_MAX_BUFFERSIZE) + ")");
  }
  const std::size_t start = out.size();
  out.resize(start + raw.size() + BLOSC_MAX_OVERHEAD);
  const int shuffle = op.shuffle == Shuffle::kNone   ? BLOSC_NOSHUFFLE
                      : op.shuffle == Shuffle::kBit ? BLOSC_BITSHUFFLE
                                                     : BLOSC_SHUFFLE;
  const int size = blosc_compress_ctx(op.level, shuffle, type_size, raw.size(), raw.data(),
                                      out.data() + start, out.size() - start,
                                      kBloscCompressors[static_cast<int>(op.compressor)], 0, 1);
  if (size <= 0) {
    fail(what, "blosc could not compress with " + std::string(kBloscCompressors[static_cast<int>(op.compressor)]) +
                   " (is it built into this libblosc?)");
  }
  out.resize(start + static_cast<std::size_t>(size));
}

void blosc_decode(std::span<const std::byte> payload, std::span<std::byte> out, std::string_view what) {
  if (payload.size() < BLOSC_MIN_HEADER_LENGTH) fail(what, "truncated blosc data");
  std::size_t nbytes = 0, cbytes = 0, block = 0;
  blosc_cbuffer_sizes(payload.data(), &nbytes, &cbytes, &block);
  if (cbytes != payload.size()) {
    fail(what, "the blosc data says " + std::to_string(cbytes) + " bytes, the frame holds " +
                   std::to_string(payload.size()));
  }
  if (nbytes != out.size()) {
    fail(what, "the blosc data holds " + std::to_string(nbytes) + " bytes, not " +
                   std::to_string(out.size()));
  }
  const int size = blosc_decompress_ctx(payload.data(), out.data(), out.size(), 1);
  if (size < 0 || static_cast<std::size_t>(size) != out.size()) fail(what, "blosc could not decode it");
}

// ---- bzip2 (its lengths are unsigned int)

void bzip2_encode(const Operator& op, std::span<const std::byte> raw, std::vector<std::byte>& out,
                  std::string_view what) {
  if (raw.size() > UINT_MAX / 2) {
    fail(what, std::to_string(raw.size()) + " bytes are more than bzip2 takes at once");
  }
  const std::size_t start = out.size();
  unsigned int capacity = static_cast<unsigned int>(raw.size() + raw.size() / 100 + 601);
  out.resize(start + capacity);
  const int status = BZ2_bzBuffToBuffCompress(
      reinterpret_cast<char*>(out.data() + start), &capacity,
      const_cast<char*>(reinterpret_cast<const char*>(raw.data())),
      static_cast<unsigned int>(raw.size()), op.level, 0, 0);
  if (status != BZ_OK) fail(what, "bzip2 could not compress (" + std::to_string(status) + ")");
  out.resize(start + capacity);
}

void bzip2_decode(std::span<const std::byte> payload, std::span<std::byte> out, std::string_view what) {
  if (payload.size() > UINT_MAX || out.size() > UINT_MAX) fail(what, "too large for bzip2");
  unsigned int size = static_cast<unsigned int>(out.size());
  // bzip2 checks its own block CRCs; a longer stream than the raw size is BZ_OUTBUFF_FULL.
  const int status = BZ2_bzBuffToBuffDecompress(
      reinterpret_cast<char*>(out.data()), &size,
      const_cast<char*>(reinterpret_cast<const char*>(payload.data())),
      static_cast<unsigned int>(payload.size()), 0, 0);
  if (status == BZ_OUTBUFF_FULL) fail(what, "the bzip2 data holds more than " + std::to_string(out.size()) + " bytes");
  if (status != BZ_OK) fail(what, "bzip2 could not decode it (" + std::to_string(status) + ")");
  if (size != out.size()) {
    fail(what, "bzip2 decoded " + std::to_string(size) + " bytes, not " + std::to_string(out.size()));
  }
}

// ---- zfp (its own full header in the payload: type, dimensions and mode)

namespace {

struct ZfpStream {
  zfp_stream* zfp = zfp_stream_open(nullptr);
  bitstream* bits = nullptr;
  zfp_field* field = nullptr;
  ~ZfpStream() {
    if (field) zfp_field_free(field);
    if (bits) stream_close(bits);
    if (zfp) zfp_stream_close(zfp);
  }
};

zfp_type zfp_type_of(DType dtype, std::string_view what) {
  if (dtype == DType::kFloat32) return zfp_type_float;
  if (dtype == DType::kFloat64) return zfp_type_double;
  fail(what, "zfp compresses float32 and float64 arrays, not " + std::string(dtype_name(dtype)) +
                 " (use a lossless operator: zstd, blosc or bzip2)");
}

// zfp's x varies fastest: a C-order extent {a, b, c} is nx = c, ny = b, nz = a.
zfp_field* make_field(void* data, zfp_type type, std::span<const std::uint64_t> extent,
                      std::string_view what) {
  switch (extent.size()) {
    case 1: return zfp_field_1d(data, type, extent[0]);
    case 2: return zfp_field_2d(data, type, extent[1], extent[0]);
    case 3: return zfp_field_3d(data, type, extent[2], extent[1], extent[0]);
    case 4: return zfp_field_4d(data, type, extent[3], extent[2], extent[1], extent[0]);
    default:
      fail(what, "zfp compresses arrays of 1 to 4 dimensions, not " +
                     std::to_string(extent.size()));
  }
}

}  // namespace

void zfp_encode(const Operator& op, DType dtype, std::span<const std::uint64_t> extent,
                std::span<const std::byte> raw, std::vector<std::byte>& out, std::string_view what) {
  const zfp_type type = zfp_type_of(dtype, what);
  if (extent.empty() || extent.size() > 4) {
    fail(what, "zfp compresses arrays of 1 to 4 dimensions, not " + std::to_string(extent.size()));
  }
  if (raw.empty()) return;  // nothing to compress: the frame says 0 bytes
  ZfpStream s;
  s.field = make_field(const_cast<std::byte*>(raw.data()), type, extent, what);
  switch (op.zfp_mode) {
    case ZfpMode::kAccuracy: zfp_stream_set_accuracy(s.zfp, op.zfp_value); break;
    case ZfpMode::kPrecision: zfp_stream_set_precision(s.zfp, static_cast<unsigned>(op.zfp_value)); break;
    case ZfpMode::kRate:
      zfp_stream_set_rate(s.zfp, op.zfp_value, type, static_cast<unsigned>(extent.size()), zfp_false);
      break;
    case ZfpMode::kNone: fail(what, "zfp needs accuracy, precision or rate");
  }
  const std::size_t start = out.size();
  out.resize(start + zfp_stream_maximum_size(s.zfp, s.field));
  s.bits = stream_open(out.data() + start, out.size() - start);
  zfp_stream_set_bit_stream(s.zfp, s.bits);
  zfp_stream_rewind(s.zfp);
  if (zfp_write_header(s.zfp, s.field, ZFP_HEADER_FULL) == 0) fail(what, "zfp could not write its header");
  const std::size_t size = zfp_compress(s.zfp, s.field);
  if (size == 0) fail(what, "zfp could not compress it");
  out.resize(start + size);
}

void zfp_decode(DType dtype, std::span<const std::uint64_t> extent, std::span<const std::byte> payload,
                std::span<std::byte> out, std::string_view what) {
  const zfp_type type = zfp_type_of(dtype, what);
  // zfp reads its stream a 64-bit word at a time, from an aligned address: a payload that is not
  // a whole number of words (a small field is a header and a few bits: 14 bytes for 64 values) or
  // does not start on a word (a frame received on a socket) is decoded from an aligned copy
  // padded with zeros, so that no read goes past the payload.
  std::vector<std::uint64_t> aligned;
  std::span<const std::byte> words = payload;
  if (payload.size() % sizeof(std::uint64_t) != 0 ||
      reinterpret_cast<std::uintptr_t>(payload.data()) % alignof(std::uint64_t) != 0) {
    aligned.assign(payload.size() / sizeof(std::uint64_t) + 1, 0);
    std::memcpy(aligned.data(), payload.data(), payload.size());
    words = {reinterpret_cast<const std::byte*>(aligned.data()), aligned.size() * sizeof(std::uint64_t)};
  }
  ZfpStream s;
  s.field = zfp_field_alloc();
  s.bits = stream_open(const_cast<std::byte*>(words.data()), words.size());
  zfp_stream_set_bit_stream(s.zfp, s.bits);
  zfp_stream_rewind(s.zfp);
  if (payload.empty() || zfp_read_header(s.zfp, s.field, ZFP_HEADER_FULL) == 0) {
    fail(what, "not zfp data (its header does not read)");
  }
  // What the header says must be what the frame's array is.
  std::unique_ptr<zfp_field, decltype(&zfp_field_free)> expected(
      make_field(out.data(), type, extent, what), zfp_field_free);
  if (s.field->type != type || zfp_field_dimensionality(s.field) != extent.size() ||
      zfp_field_size(s.field, nullptr) != zfp_field_size(expected.get(), nullptr) ||
      s.field->nx != expected->nx || s.field->ny != expected->ny || s.field->nz != expected->nz ||
      s.field->nw != expected->nw) {
    fail(what, "the zfp header describes another array than the chunk's");
  }
  zfp_field_set_pointer(s.field, out.data());
  if (zfp_field_size(s.field, nullptr) * dtype_size(dtype) != out.size()) {
    fail(what, "the zfp array is not the chunk's size");
  }
  // zfp reads past a truncated stream as zeros; the frame's checksum has already caught that.
  if (zfp_decompress(s.zfp, s.field) == 0) fail(what, "zfp could not decode it");
}

}  // namespace slipstream::codec::detail

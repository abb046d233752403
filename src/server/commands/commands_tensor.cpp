// RedisAI tensor commands: AI.TENSORSET and AI.TENSORGET, with RedisAI's arguments, replies and
// error texts. Tensors are stored as dtype + shape + row-major bytes; no ML library is involved.
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "server/commands/command_util.hpp"
#include "server/net/reply.hpp"
#include "server/server.hpp"
#include "server/store/tensor_codec.hpp"

namespace slipstream::server {
namespace {

constexpr std::string_view kEmptyTensorKey = "ERR tensor key is empty or in a different shard";
constexpr std::string_view kInvalidValue = "ERR invalid value";

template <typename T>
void store_element(char* out, T value) {
  std::memcpy(out, &value, sizeof(T));
}

// Parses a FLOAT or DOUBLE element by Redis's rule for doubles (RedisAI uses it): text strtod
// reads whole, no leading space, not NaN, and a finite number the type can hold. So "inf" and
// "-inf" are stored as written, while "1e400" (or 1e39 for FLOAT) is refused rather than turned
// into an infinity nobody wrote, and 1e-400 rather than into 0.
bool parse_floating(std::string_view text, bool single_precision, double* value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  *value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || std::isnan(*value)) return false;
  const bool written_infinite = errno != ERANGE && std::isinf(*value);
  if (errno == ERANGE && (std::isinf(*value) || *value == 0)) return false;
  if (!single_precision || written_infinite) return true;
  const float narrowed = static_cast<float>(*value);
  return !std::isinf(narrowed) && (narrowed != 0 || *value == 0);
}

// Parses one VALUES element into `out` (dtype_size(type) bytes). RedisAI rejects negative values
// for signed integer types (a bug in its range check); slipstream accepts the full signed range.
// Integer types take integers only: no "1.0", "1e3", "inf" or "nan".
bool parse_element(DType type, std::string_view text, char* out) {
  if (type == DType::kFloat32 || type == DType::kFloat64) {
    double value = 0;
    if (!parse_floating(text, type == DType::kFloat32, &value)) return false;
    if (type == DType::kFloat32) {
      store_element(out, static_cast<float>(value));
    } else {
      store_element(out, value);
    }
    return true;
  }
  if (type == DType::kUInt64) {  // beyond int64: parsed on its own
    std::uint64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) return false;
    store_element(out, value);
    return true;
  }
  auto parsed = parse_int(text);
  if (!parsed) return false;
  std::int64_t v = *parsed;
  auto in_range = [v](std::int64_t lo, std::int64_t hi) { return v >= lo && v <= hi; };
  switch (type) {
    case DType::kInt8:
      if (!in_range(INT8_MIN, INT8_MAX)) return false;
      store_element(out, static_cast<std::int8_t>(v));
      return true;
    case DType::kInt16:
      if (!in_range(INT16_MIN, INT16_MAX)) return false;
      store_element(out, static_cast<std::int16_t>(v));
      return true;
    case DType::kInt32:
      if (!in_range(INT32_MIN, INT32_MAX)) return false;
      store_element(out, static_cast<std::int32_t>(v));
      return true;
    case DType::kInt64: store_element(out, v); return true;
    case DType::kUInt8:
      if (!in_range(0, UINT8_MAX)) return false;
      store_element(out, static_cast<std::uint8_t>(v));
      return true;
    case DType::kUInt16:
      if (!in_range(0, UINT16_MAX)) return false;
      store_element(out, static_cast<std::uint16_t>(v));
      return true;
    case DType::kUInt32:
      if (!in_range(0, UINT32_MAX)) return false;
      store_element(out, static_cast<std::uint32_t>(v));
      return true;
    case DType::kBool:
      if (!in_range(0, 1)) return false;
      store_element(out, static_cast<std::uint8_t>(v));
      return true;
    default: return false;
  }
}

// Why this order of checks: RedisAI answers arity, then WRONGTYPE, then argument errors, and
// clients match on those texts. Every check happens before the keyspace is touched, so a
// rejected TENSORSET leaves the key exactly as it was.
Outcome tensorset(CommandContext& c) {
  ValuePtr existing = c.server.keyspace().get(c.arg(1));
  if (existing && existing->type() != ValueType::kTensor) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  auto dtype = parse_dtype(c.arg(2));
  if (!dtype) {
    c.reply.error("ERR invalid data type");
    return Outcome::kDone;
  }
  const std::size_t element = dtype_size(*dtype);
  std::vector<std::int64_t> shape;
  std::size_t blob_index = 0, values_index = 0;
  bool encoded = false;  // Slipstream's own: the BLOB is a codec frame of the tensor
  std::size_t i = 3;
  for (; i < c.argc(); ++i) {
    std::string_view arg = c.arg(i);
    if (equals_nocase(arg, "ENCODED")) {
      if (i + 1 >= c.argc() || !equals_nocase(c.arg(i + 1), "BLOB")) {
        c.reply.error("ERR ENCODED must come just before BLOB in 'AI.TENSORSET' command");
        return Outcome::kDone;
      }
      encoded = true;
      continue;
    }
    if (equals_nocase(arg, "BLOB")) {
      if (i + 2 != c.argc()) {
        c.reply.error(
            "ERR a single binary string should come after the BLOB argument in 'AI.TENSORSET' "
            "command");
        return Outcome::kDone;
      }
      blob_index = i + 1;
      break;
    }
    if (equals_nocase(arg, "VALUES")) {
      values_index = i + 1;
      break;
    }
    auto dim = parse_int(arg);
    if (!dim || *dim <= 0) {
      c.reply.error("ERR invalid or negative value found in tensor shape");
      return Outcome::kDone;
    }
    shape.push_back(*dim);
  }
  if (shape.size() > kMaxTensorRank) {
    c.reply.error("ERR too many dimensions: " + std::to_string(shape.size()) + " (at most " +
                  std::to_string(kMaxTensorRank) + ")");
    return Outcome::kDone;
  }
  // Element count and byte size, refusing overflow and anything over max-bulk-len.
  std::size_t count = 1;
  const std::size_t limit = c.server.max_bulk_len();
  for (std::int64_t dim : shape) {
    auto d = static_cast<std::size_t>(dim);
    if (count > limit / d) {
      c.reply.error("ERR tensor too large: its size exceeds max-bulk-len (" +
                    std::to_string(limit) + " bytes)");
      return Outcome::kDone;
    }
    count *= d;
  }
  if (count > limit / element) {
    c.reply.error("ERR tensor too large: its size exceeds max-bulk-len (" + std::to_string(limit) +
                  " bytes)");
    return Outcome::kDone;
  }
  const std::size_t bytes = count * element;

  Buffer data;
  if (encoded) {
    // The frame is checked (its header: operator, dtype, raw size) and stored as it is: clients
    // that take frames decode it themselves; it is decoded here only for those that do not.
    if (std::string problem = encoded_tensor_problem(*dtype, bytes, c.args[blob_index].view());
        !problem.empty()) {
      c.reply.error("ERR the encoded tensor does not fit its shape and type: " + problem);
      return Outcome::kDone;
    }
    data = std::move(c.args[blob_index]);
  } else if (blob_index != 0) {
    if (c.args[blob_index].size() != bytes) {
      c.reply.error("ERR data length does not match tensor shape and type");
      return Outcome::kDone;
    }
    data = std::move(c.args[blob_index]);  // the received buffer becomes the tensor: no copy
  } else if (values_index != 0) {
    if (c.argc() - values_index != count) {
      c.reply.error("ERR wrong number of values was given in 'AI.TENSORSET' command");
      return Outcome::kDone;
    }
    if (c.server.keyspace().over_limit(bytes)) {
      c.reply.error(kOomError);
      return Outcome::kDone;
    }
    data = Buffer::uninitialized(bytes);
    for (std::size_t k = 0; k < count; ++k) {
      if (!parse_element(*dtype, c.arg(values_index + k), data.data() + k * element)) {
        c.reply.error(kInvalidValue);
        return Outcome::kDone;
      }
    }
  } else {
    if (c.server.keyspace().over_limit(bytes)) {
      c.reply.error(kOomError);
      return Outcome::kDone;
    }
    data = Buffer::uninitialized(bytes);
    if (bytes > 0) std::memset(data.data(), 0, bytes);
  }
  if (c.server.keyspace().over_limit(data.size())) {
    c.reply.error(kOomError);
    return Outcome::kDone;
  }
  auto value =
      std::make_shared<Value>(Tensor{*dtype, std::move(shape), std::move(data), encoded});
  if (!c.server.keyspace().set_unless_other_type(c.arg(1), std::move(value))) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  c.server.mark_dirty();
  c.reply.simple("OK");
  return Outcome::kDone;
}

template <typename T>
T load_element(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

void reply_values(ReplyBuffer& reply, const Tensor& tensor, const Buffer& data) {
  const std::size_t element = dtype_size(tensor.dtype);
  const std::size_t count = data.size() / element;
  reply.array(count);
  const char* p = data.data();
  for (std::size_t k = 0; k < count; ++k, p += element) {
    switch (tensor.dtype) {
      case DType::kFloat32: reply.double_value(load_element<float>(p)); break;
      case DType::kFloat64: reply.double_value(load_element<double>(p)); break;
      case DType::kInt8: reply.integer(load_element<std::int8_t>(p)); break;
      case DType::kInt16: reply.integer(load_element<std::int16_t>(p)); break;
      case DType::kInt32: reply.integer(load_element<std::int32_t>(p)); break;
      case DType::kInt64: reply.integer(load_element<std::int64_t>(p)); break;
      case DType::kUInt8:
      case DType::kBool: reply.integer(load_element<std::uint8_t>(p)); break;
      case DType::kUInt16: reply.integer(load_element<std::uint16_t>(p)); break;
      case DType::kUInt32: reply.integer(load_element<std::uint32_t>(p)); break;
      case DType::kUInt64: {  // RESP integers are signed: larger values as decimal text
        const auto value = load_element<std::uint64_t>(p);
        if (value <= static_cast<std::uint64_t>(INT64_MAX)) {
          reply.integer(static_cast<std::int64_t>(value));
        } else {
          reply.bulk(std::to_string(value));
        }
        break;
      }
    }
  }
}

Outcome tensorget(CommandContext& c) {
  if (c.argc() > 5) {
    c.reply.error("ERR wrong number of arguments for '" + std::string(c.arg(0)) + "' command");
    return Outcome::kDone;
  }
  ValuePtr value = c.server.keyspace().get(c.arg(1));
  Stats& stats = c.server.stats();
  (value ? stats.keyspace_hits : stats.keyspace_misses).fetch_add(1, std::memory_order_relaxed);
  if (!value) {
    c.reply.error(kEmptyTensorKey);
    return Outcome::kDone;
  }
  if (value->type() != ValueType::kTensor) {
    c.reply.error(kWrongType);
    return Outcome::kDone;
  }
  bool meta = false, blob = false, values = false, frames = false;
  for (std::size_t i = 2; i < c.argc(); ++i) {
    if (equals_nocase(c.arg(i), "ENCODED")) {  // Slipstream's own: the caller decodes frames
      frames = true;
    } else if (equals_nocase(c.arg(i), "META")) {
      meta = true;
    } else if (equals_nocase(c.arg(i), "BLOB")) {
      blob = true;
    } else if (equals_nocase(c.arg(i), "VALUES")) {
      values = true;
    } else {
      c.reply.error("ERR unsupported data format");
      return Outcome::kDone;
    }
  }
  if (blob && values) {
    c.reply.error("ERR both BLOB and VALUES specified");
    return Outcome::kDone;
  }
  if (!meta && !blob && !values) meta = blob = true;  // RedisAI's default: META BLOB
  const Tensor& tensor = value->tensor();
  // An encoded tensor goes as its frame, labelled "frame", to a caller that said ENCODED and asked
  // for META BLOB; anyone else gets its elements, decoded here.
  const bool send_frame = tensor.encoded && frames && meta && blob;
  std::shared_ptr<const DecodedTensor> decoded;
  if (tensor.encoded && !send_frame && (blob || values)) {
    std::string error;
    decoded = decode_tensor(c.server.keyspace(), tensor, &error);
    if (!decoded) {
      c.reply.error(error);
      return Outcome::kDone;
    }
  }
  if (meta) {
    c.reply.array(blob || values ? 6 : 4);
    c.reply.bulk("dtype");
    c.reply.bulk(dtype_name(tensor.dtype));
    c.reply.bulk("shape");
    c.reply.array(tensor.shape.size());
    for (std::int64_t dim : tensor.shape) c.reply.integer(dim);
  }
  if (blob) {
    if (meta) c.reply.bulk(send_frame ? "frame" : "blob");
    if (decoded) {
      const std::string_view bytes = decoded->data.view();
      c.reply.bulk_shared(std::move(decoded), bytes);  // counted until the reply is written
    } else {
      c.reply.bulk_shared(value, tensor.data.view());  // streamed from the stored bytes
    }
  } else if (values) {
    if (meta) c.reply.bulk("values");
    reply_values(c.reply, tensor, decoded ? decoded->data : tensor.data);
  }
  return Outcome::kDone;
}

}  // namespace

void add_tensor_commands(std::vector<CommandSpec>& out) {
  out.insert(out.end(), {
    {"AI.TENSORSET", -4, kWrite | kDenyOom, 1, 1, 1, tensorset, "tensor",
     "key type d1 [d2 ...] [[ENCODED] BLOB data | VALUES v1 [v2 ...]]",
     "Stores a tensor (FLOAT, DOUBLE, INT8, INT16, INT32, INT64, UINT8, UINT16, BOOL; "
     "Slipstream's own UINT32, UINT64); "
     "without data it is zero-filled. ENCODED: the blob is a compressed frame of the tensor (a client's operator)."},
    {"AI.TENSORGET", -2, kReadOnly, 1, 1, 1, tensorget, "tensor",
     "key [META] [BLOB | VALUES] [ENCODED]",
     "A tensor's dtype and shape and/or its bytes or values; META BLOB by default. ENCODED: a "
     "compressed tensor comes as its frame (labelled frame) with META BLOB."},
  });
}

}  // namespace slipstream::server

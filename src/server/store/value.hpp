// Values held in the keyspace: strings, tensors, hashes and lists.
//
// A stored value is shared through std::shared_ptr and never changes while anyone else holds a
// reference: the keyspace copies a hash or list before mutating it if a reader (a reply being
// written, a snapshot) still holds it. So readers stream bytes out without holding a lock.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "common/buffer.hpp"
#include "ml/backend.hpp"
#include "ml/executor.hpp"
#include "slipstream/tensor.hpp"

namespace slipstream::server {

enum class ValueType : std::uint8_t { kString, kTensor, kHash, kList, kModel, kScript };

/// The name TYPE replies with ("string", "hash", "list", and RedisAI's "AI_TENSOR", "AI__MODEL",
/// "AI_SCRIPT").
std::string_view value_type_name(ValueType type) noexcept;

struct Tensor {
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;  // row-major, every dimension > 0
  Buffer data;  // exactly prod(shape) * dtype_size(dtype) bytes, or, when encoded, a codec frame
  /// `data` is a frame of src/codec (a client compressed the tensor: AI.TENSORSET ... ENCODED),
  /// checked to decode to prod(shape) * dtype_size(dtype) bytes of dtype. Stored and sent to
  /// clients that take frames as it is; decoded_tensor_data() for everything else.
  bool encoded = false;
};


/// A field -> value map that keeps insertion order (as Redis's small hashes do), so HGETALL
/// replies in the same order as Redis for the hashes clients actually build (dataset metadata).
///
/// set, erase and find are O(1) on average whatever the size: the entries sit in a list (stable
/// nodes, so insertion order survives erasing from the middle) and an index maps each field to its
/// node. A hash of 100k fields costs the same per field as one of ten. The index keys view the
/// field names inside the list nodes, so a copy rebuilds its index over its own nodes.
class Hash {
 public:
  using Entry = std::pair<std::string, std::string>;
  /// Bytes a field costs beyond its name and value, for memory accounting: its list node (two
  /// links, two std::string) and its index node (link, field view, node iterator, cached hash)
  /// plus a bucket.
  static constexpr std::size_t kFieldOverhead = 128;

  Hash() = default;
  Hash(const Hash& other);
  Hash& operator=(const Hash& other);
  // Moving a std::list keeps its nodes where they are, so the moved index stays valid.
  Hash(Hash&& other) noexcept;
  Hash& operator=(Hash&& other) noexcept;
  ~Hash() = default;

  /// Sets a field; returns true when the field is new.
  bool set(std::string_view field, std::string_view value);
  /// Removes a field; returns true when it existed.
  bool erase(std::string_view field);
  /// The field's value, or nullptr. Valid until the hash is next changed.
  const std::string* find(std::string_view field) const;
  std::size_t size() const noexcept { return entries_.size(); }
  /// Every field and value, in insertion order.
  const std::list<Entry>& entries() const noexcept { return entries_; }
  /// Prepares for `fields` fields (a snapshot load knows the count up front).
  void reserve(std::size_t fields) { index_.reserve(fields); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void rebuild_index();

  std::list<Entry> entries_;
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;
  std::size_t bytes_ = 0;
};

class List {
 public:
  /// Bytes an item costs beyond its own, for memory accounting (a std::string in the deque).
  static constexpr std::size_t kItemOverhead = 48;

  void push_back(std::string item);
  void push_front(std::string item);
  std::string pop_front();
  std::string pop_back();
  std::size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }
  const std::string& at(std::size_t index) const { return items_[index]; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  std::deque<std::string> items_;
  std::size_t bytes_ = 0;
};

/// An earlier version of a model, kept loaded so that callers can pin it (AI.MODELSTORE ... KEEP n,
/// AI.MODELEXECUTE ... VERSION v). Only what running it needs: not its blob.
struct KeptModel {
  std::uint64_t version = 0;
  std::string tag;
  ml::BatchSettings batching;
  std::shared_ptr<ml::Model> runtime;
  std::shared_ptr<ml::ExecutionStats> stats;
};

/// A stored model (AI.MODELSTORE). Immutable once stored; a new store makes a new entry with the
/// next version, while executions already running keep the runtime they started with.
struct ModelEntry {
  std::string backend = "TORCH";  ///< "TORCH" or "ONNX" (ml::backend_name)
  std::string device;  ///< as the client gave it ("CPU", "GPU:1")
  std::string tag;
  ml::BatchSettings batching;
  std::vector<std::string> inputs, outputs;  ///< names given at store time (informational)
  Buffer blob;                               ///< the serialized model, for AI.MODELGET and snapshots
  std::uint64_t version = 1;
  std::shared_ptr<ml::Model> runtime;  ///< null when loading failed (see load_error)
  std::string load_error;
  std::shared_ptr<ml::ExecutionStats> stats = std::make_shared<ml::ExecutionStats>();
  /// KEEP n: how many earlier versions this store keeps, and those versions, newest first (at
  /// most `keep`; only versions that loaded). Not saved in snapshots.
  std::uint32_t keep = 0;
  std::vector<KeptModel> kept;
};

/// What a stored model's blob is (its backend name).
inline ml::ModelFormat model_format(const ModelEntry& model) {
  return ml::parse_backend_name(model.backend).value_or(ml::ModelFormat::kTorchScript);
}

/// A stored script (AI.SCRIPTSTORE / AI.SCRIPTSET). Immutable once stored, like ModelEntry.
struct ScriptEntry {
  std::string device;
  std::string tag;
  std::vector<std::string> entry_points;  ///< empty for scripts stored with AI.SCRIPTSET
  std::string source;
  std::uint64_t version = 1;
  std::shared_ptr<ml::Script> runtime;
  std::string load_error;
  std::shared_ptr<ml::ExecutionStats> stats = std::make_shared<ml::ExecutionStats>();
};

class Value {
 public:
  /// Bytes a value costs beyond its contents, for memory accounting (the shared block and the
  /// variant).
  static constexpr std::size_t kOverhead = 48;

  explicit Value(Buffer string) : data_(std::move(string)) {}
  explicit Value(Tensor tensor) : data_(std::move(tensor)) {}
  explicit Value(Hash hash) : data_(std::move(hash)) {}
  explicit Value(List list) : data_(std::move(list)) {}
  explicit Value(ModelEntry model) : data_(std::move(model)) {}
  explicit Value(ScriptEntry script) : data_(std::move(script)) {}

  ValueType type() const noexcept { return static_cast<ValueType>(data_.index()); }
  const Buffer& string() const { return std::get<Buffer>(data_); }
  const Tensor& tensor() const { return std::get<Tensor>(data_); }
  const Hash& hash() const { return std::get<Hash>(data_); }
  const List& list() const { return std::get<List>(data_); }
  const ModelEntry& model() const { return std::get<ModelEntry>(data_); }
  const ScriptEntry& script() const { return std::get<ScriptEntry>(data_); }
  ModelEntry& model() { return std::get<ModelEntry>(data_); }
  ScriptEntry& script() { return std::get<ScriptEntry>(data_); }
  Hash& hash() { return std::get<Hash>(data_); }
  List& list() { return std::get<List>(data_); }

  /// Approximate bytes this value occupies, for INFO memory and --maxmemory.
  std::size_t memory_usage() const noexcept;
  /// A deep copy (used before mutating a value that readers still hold).
  std::shared_ptr<Value> clone() const;

 private:
  std::variant<Buffer, Tensor, Hash, List, ModelEntry, ScriptEntry> data_;
};

using ValuePtr = std::shared_ptr<const Value>;

}  // namespace slipstream::server

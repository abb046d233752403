// Value types of the keyspace; see value.hpp.
#include "server/store/value.hpp"

#include <iterator>

namespace slipstream::server {
namespace {
constexpr std::size_t kEntryOverhead = Value::kOverhead;
}  // namespace

std::string_view value_type_name(ValueType type) noexcept {
  switch (type) {
    case ValueType::kString: return "string";
    case ValueType::kTensor: return "AI_TENSOR";
    case ValueType::kHash: return "hash";
    case ValueType::kList: return "list";
    case ValueType::kModel: return "AI__MODEL";
    case ValueType::kScript: return "AI_SCRIPT";
  }
  return "none";
}

Hash::Hash(const Hash& other) : entries_(other.entries_), bytes_(other.bytes_) { rebuild_index(); }

Hash& Hash::operator=(const Hash& other) {
  if (this != &other) *this = Hash(other);
  return *this;
}

Hash::Hash(Hash&& other) noexcept
    : entries_(std::move(other.entries_)),
      index_(std::move(other.index_)),
      bytes_(std::exchange(other.bytes_, 0)) {
  other.entries_.clear();
  other.index_.clear();
}

Hash& Hash::operator=(Hash&& other) noexcept {
  if (this != &other) {
    entries_ = std::move(other.entries_);
    index_ = std::move(other.index_);
    bytes_ = std::exchange(other.bytes_, 0);
    other.entries_.clear();
    other.index_.clear();
  }
  return *this;
}

void Hash::rebuild_index() {
  index_.clear();
  index_.reserve(entries_.size());
  for (auto it = entries_.begin(); it != entries_.end(); ++it) index_.emplace(it->first, it);
}

bool Hash::set(std::string_view field, std::string_view value) {
  if (auto found = index_.find(field); found != index_.end()) {
    std::string& current = found->second->second;
    bytes_ = bytes_ - current.size() + value.size();
    current.assign(value);
    return false;
  }
  entries_.emplace_back(std::string(field), std::string(value));
  auto node = std::prev(entries_.end());
  try {
    index_.emplace(node->first, node);  // views the node's own copy of the name
  } catch (...) {
    entries_.pop_back();
    throw;
  }
  bytes_ += field.size() + value.size() + kFieldOverhead;
  return true;
}

bool Hash::erase(std::string_view field) {
  auto found = index_.find(field);
  if (found == index_.end()) return false;
  auto node = found->second;
  bytes_ -= node->first.size() + node->second.size() + kFieldOverhead;
  index_.erase(found);  // before the node: the index key views the node's name
  entries_.erase(node);
  return true;
}

const std::string* Hash::find(std::string_view field) const {
  auto found = index_.find(field);
  return found == index_.end() ? nullptr : &found->second->second;
}

void List::push_back(std::string item) {
  bytes_ += item.size() + kItemOverhead;
  items_.push_back(std::move(item));
}

void List::push_front(std::string item) {
  bytes_ += item.size() + kItemOverhead;
  items_.push_front(std::move(item));
}

std::string List::pop_front() {
  std::string item = std::move(items_.front());
  items_.pop_front();
  bytes_ -= item.size() + kItemOverhead;
  return item;
}

std::string List::pop_back() {
  std::string item = std::move(items_.back());
  items_.pop_back();
  bytes_ -= item.size() + kItemOverhead;
  return item;
}

std::size_t Value::memory_usage() const noexcept {
  switch (type()) {
    case ValueType::kString: return string().size() + kEntryOverhead;
    case ValueType::kTensor:
      return tensor().data.size() + tensor().shape.size() * 8 + kEntryOverhead;
    case ValueType::kHash: return hash().bytes() + kEntryOverhead;
    case ValueType::kList: return list().bytes() + kEntryOverhead;
    case ValueType::kModel: return model().blob.size() + kEntryOverhead;
    case ValueType::kScript: return script().source.size() + kEntryOverhead;
  }
  return 0;
}

std::shared_ptr<Value> Value::clone() const {
  switch (type()) {
    case ValueType::kString: return std::make_shared<Value>(string().clone());
    case ValueType::kTensor: {
      const Tensor& t = tensor();
      return std::make_shared<Value>(Tensor{t.dtype, t.shape, t.data.clone(), t.encoded});
    }
    case ValueType::kHash: return std::make_shared<Value>(Hash(hash()));
    case ValueType::kList: return std::make_shared<Value>(List(list()));
    case ValueType::kModel: {
      const ModelEntry& m = model();
      return std::make_shared<Value>(ModelEntry{m.backend, m.device, m.tag, m.batching, m.inputs,
                                                m.outputs, m.blob.clone(), m.version, m.runtime,
                                                m.load_error, m.stats, m.keep, m.kept});
    }
    case ValueType::kScript: return std::make_shared<Value>(ScriptEntry(script()));
  }
  return nullptr;
}

}  // namespace slipstream::server

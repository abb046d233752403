// Value types of the keyspace; see value.hpp.
#include "server/store/value.hpp"

namespace slipstream::server {
namespace {
constexpr std::size_t kEntryOverhead = 48;  // rough per-element bookkeeping cost
}

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

bool Hash::set(std::string_view field, std::string_view value) {
  for (auto& [name, current] : entries_) {
    if (name == field) {
      bytes_ = bytes_ - current.size() + value.size();
      current.assign(value);
      return false;
    }
  }
  entries_.emplace_back(std::string(field), std::string(value));
  bytes_ += field.size() + value.size() + kEntryOverhead;
  return true;
}

bool Hash::erase(std::string_view field) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == field) {
      bytes_ -= it->first.size() + it->second.size() + kEntryOverhead;
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

const std::string* Hash::find(std::string_view field) const {
  for (const auto& [name, value] : entries_) {
    if (name == field) return &value;
  }
  return nullptr;
}

void List::push_back(std::string item) {
  bytes_ += item.size() + kEntryOverhead;
  items_.push_back(std::move(item));
}

void List::push_front(std::string item) {
  bytes_ += item.size() + kEntryOverhead;
  items_.push_front(std::move(item));
}

std::string List::pop_front() {
  std::string item = std::move(items_.front());
  items_.pop_front();
  bytes_ -= item.size() + kEntryOverhead;
  return item;
}

std::string List::pop_back() {
  std::string item = std::move(items_.back());
  items_.pop_back();
  bytes_ -= item.size() + kEntryOverhead;
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
      return std::make_shared<Value>(Tensor{t.dtype, t.shape, t.data.clone()});
    }
    case ValueType::kHash: return std::make_shared<Value>(Hash(hash()));
    case ValueType::kList: return std::make_shared<Value>(List(list()));
    case ValueType::kModel: {
      const ModelEntry& m = model();
      return std::make_shared<Value>(ModelEntry{m.backend, m.device, m.tag, m.batching, m.inputs,
                                                m.outputs, m.blob.clone(), m.version, m.runtime,
                                                m.load_error, m.stats});
    }
    case ValueType::kScript: return std::make_shared<Value>(ScriptEntry(script()));
  }
  return nullptr;
}

}  // namespace slipstream::server

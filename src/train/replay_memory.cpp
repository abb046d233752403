// Replay memory policies; see replay_memory.hpp.
#include "slipstream/replay_memory.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/ascii.hpp"

namespace slipstream::train {

std::optional<ReplayPolicy> parse_replay_policy(std::string_view name) {
  const std::string lower = ascii_lower(name);
  if (lower == "fifo") return ReplayPolicy::kFifo;
  if (lower == "firo") return ReplayPolicy::kFiro;
  if (lower == "reservoir") return ReplayPolicy::kReservoir;
  return std::nullopt;
}

std::string_view replay_policy_name(ReplayPolicy policy) {
  switch (policy) {
    case ReplayPolicy::kFifo: return "fifo";
    case ReplayPolicy::kFiro: return "firo";
    case ReplayPolicy::kReservoir: break;
  }
  return "reservoir";
}

ReplayIndex::ReplayIndex(const ReplayConfig& config) : config_(config), rng_(config.seed) {
  if (config.max_samples == 0) {
    throw std::invalid_argument("replay memory: max_samples must be at least 1");
  }
  if (config.min_fill > config.max_samples) {
    throw std::invalid_argument("replay memory: min_fill (" + std::to_string(config.min_fill) +
                                ") is more than max_samples (" +
                                std::to_string(config.max_samples) + "): it would never be ready");
  }
}

// Rejection sampling on the generator's 64-bit output: the 2^64 mod n smallest values are
// refused, so every remainder is equally likely.
std::uint64_t ReplayIndex::below(std::uint64_t n) {
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t x = rng_();
    if (x >= threshold) return x % n;
  }
}

std::size_t ReplayIndex::take_slot() {
  if (!free_.empty()) {
    const std::size_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  entries_.emplace_back();
  return entries_.size() - 1;
}

void ReplayIndex::place(std::size_t slot, std::size_t bytes) {
  Entry& entry = entries_[slot];
  entry = Entry{bytes, counts_.seen - 1, 0, held_.size(), true};
  held_.push_back(slot);
  if (config_.policy == ReplayPolicy::kFifo) order_.push_back(slot);
  bytes_ += bytes;
  ++counts_.admitted;
}

void ReplayIndex::evict(std::size_t slot, std::vector<std::size_t>& evicted) {
  Entry& entry = entries_[slot];
  const std::size_t position = entry.position;
  held_[position] = held_.back();
  entries_[held_[position]].position = position;
  held_.pop_back();
  if (config_.policy == ReplayPolicy::kFifo) {
    if (!order_.empty() && order_.front() == slot) {
      order_.pop_front();
    } else {
      order_.erase(std::find(order_.begin(), order_.end(), slot));
    }
  }
  bytes_ -= entry.bytes;
  entry.live = false;
  free_.push_back(slot);
  evicted.push_back(slot);
  ++counts_.evicted;
}

void ReplayIndex::fit(std::size_t keep, std::vector<std::size_t>& evicted) {
  auto over = [&] {
    return held_.size() > config_.max_samples ||
           (config_.max_bytes > 0 && bytes_ > config_.max_bytes);
  };
  while (over() && held_.size() > 1) {
    std::size_t victim = keep;
    if (config_.policy == ReplayPolicy::kFifo) {
      victim = order_.front();
    } else {
      while (victim == keep) victim = held_[below(held_.size())];
    }
    evict(victim, evicted);
  }
}

ReplayIndex::Offer ReplayIndex::offer(std::size_t bytes) {
  Offer out;
  const std::uint64_t k = ++counts_.seen;  // this sample is the k-th seen
  if (config_.max_bytes > 0 && bytes > config_.max_bytes) {
    ++counts_.refused;
    return out;
  }
  if (config_.policy == ReplayPolicy::kReservoir && held_.size() >= config_.max_samples) {
    // Algorithm R: position j of the reservoir takes the k-th sample when j < capacity.
    const std::uint64_t j = below(k);
    if (j >= config_.max_samples) {
      ++counts_.refused;
      return out;
    }
    evict(held_[static_cast<std::size_t>(j) % held_.size()], out.evicted);
  }
  const std::size_t slot = take_slot();
  place(slot, bytes);
  fit(slot, out.evicted);
  out.slot = slot;
  return out;
}

std::vector<std::size_t> ReplayIndex::draw(std::size_t n) {
  std::vector<std::size_t> out;
  if (held_.empty()) return out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t slot = held_[below(held_.size())];
    Entry& entry = entries_[slot];
    ++entry.uses;
    age_sum_ += static_cast<double>(counts_.seen - 1 - entry.arrival);
    ++counts_.draws;
    out.push_back(slot);
  }
  return out;
}

ReplayStats ReplayIndex::stats() const {
  ReplayStats out = counts_;
  out.held = held_.size();
  out.bytes = bytes_;
  std::uint64_t uses = 0;
  for (std::size_t slot : held_) {
    uses += entries_[slot].uses;
    out.max_uses = std::max(out.max_uses, entries_[slot].uses);
  }
  out.mean_uses = held_.empty() ? 0.0 : static_cast<double>(uses) / static_cast<double>(held_.size());
  out.mean_draw_age = counts_.draws == 0 ? 0.0 : age_sum_ / static_cast<double>(counts_.draws);
  return out;
}

}  // namespace slipstream::train

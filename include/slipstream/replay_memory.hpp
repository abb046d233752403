// Replay memory for online training (public: the trainer uses it, and so can a user's own loop,
// through libslipstream_training): what the trainer keeps of the samples a stream has brought,
// so that a model learning from the newest steps does not forget earlier phases of the run.
//
// Policies (what happens when a new sample comes and the memory is full):
//   fifo       the oldest sample goes: the memory is the most recent window.
//   firo       first in, random out: a random held sample goes; the newest is always kept.
//   reservoir  Algorithm R: the k-th sample seen is kept with probability capacity / k, in place
//              of a random held one, so every sample seen so far is held with equal probability.
// The memory is bounded in samples and, optionally, in bytes; a sample larger than the byte bound
// is refused. With a byte bound, samples are also evicted (oldest for fifo, random otherwise)
// until the bytes fit, which keeps reservoir's uniformity only approximately.
//
// ReplayIndex is the policy engine over slot numbers (no samples, no torch); ReplayMemory<Sample>
// keeps the samples in its slots. Neither is thread-safe: one trainer thread owns one. Draws and
// replacements use a seeded generator whose output is fully specified (std::mt19937_64 and
// rejection sampling), so a seed gives the same memory and the same draws on every platform.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "slipstream/export.hpp"

namespace slipstream::train {

enum class ReplayPolicy { kFifo, kFiro, kReservoir };

/// "fifo", "firo" or "reservoir" (case-insensitive); nullopt otherwise.
SLIPSTREAM_API std::optional<ReplayPolicy> parse_replay_policy(std::string_view name);
SLIPSTREAM_API std::string_view replay_policy_name(ReplayPolicy policy);

struct ReplayConfig {
  ReplayPolicy policy = ReplayPolicy::kReservoir;
  std::size_t max_samples = 10000;  ///< at least 1
  std::size_t max_bytes = 0;        ///< 0: no byte bound
  std::size_t min_fill = 0;         ///< samples held before ready(); at most max_samples
  std::uint64_t seed = 0;
};

struct ReplayStats {
  std::size_t held = 0;         ///< samples held now (occupancy)
  std::size_t bytes = 0;        ///< their bytes
  std::uint64_t seen = 0;       ///< samples offered so far
  std::uint64_t admitted = 0;   ///< taken in
  std::uint64_t evicted = 0;    ///< taken in, then pushed out
  std::uint64_t refused = 0;    ///< not taken in (reservoir's coin, or larger than the byte bound)
  std::uint64_t draws = 0;      ///< samples drawn for training
  double mean_uses = 0;         ///< times each held sample was drawn, on average
  std::uint64_t max_uses = 0;   ///< the most any held sample was drawn
  double mean_draw_age = 0;     ///< samples seen between a drawn sample's arrival and its draw
};

class SLIPSTREAM_API ReplayIndex {
 public:
  /// Throws std::invalid_argument for max_samples 0 or min_fill > max_samples.
  explicit ReplayIndex(const ReplayConfig& config);

  /// Where a sample offered goes: its slot (nullopt: refused), and the slots it pushed out
  /// (their samples must be dropped before the slot is reused).
  struct Offer {
    std::optional<std::size_t> slot;
    std::vector<std::size_t> evicted;
  };
  Offer offer(std::size_t bytes);

  /// `n` held slots drawn uniformly at random, with replacement; empty when nothing is held.
  std::vector<std::size_t> draw(std::size_t n);

  bool ready() const noexcept { return held_.size() >= config_.min_fill && !held_.empty(); }
  std::size_t held() const noexcept { return held_.size(); }
  /// How many samples had been offered when the one in `slot` arrived (0-based).
  std::uint64_t arrival(std::size_t slot) const { return entries_.at(slot).arrival; }
  ReplayStats stats() const;
  const ReplayConfig& config() const noexcept { return config_; }

 private:
  struct Entry {
    std::size_t bytes = 0;
    std::uint64_t arrival = 0;
    std::uint64_t uses = 0;
    std::size_t position = 0;  // index in held_
    bool live = false;
  };

  std::uint64_t below(std::uint64_t n);  // uniform in [0, n), n > 0
  std::size_t take_slot();
  void place(std::size_t slot, std::size_t bytes);
  void evict(std::size_t slot, std::vector<std::size_t>& evicted);
  // Evicts (oldest for fifo, random otherwise, never `keep`) until the bounds hold.
  void fit(std::size_t keep, std::vector<std::size_t>& evicted);

  ReplayConfig config_;
  std::mt19937_64 rng_;
  std::vector<Entry> entries_;  // by slot
  std::vector<std::size_t> free_;  // slots not live
  std::vector<std::size_t> held_;  // live slots, in no particular order (random access)
  std::deque<std::size_t> order_;  // fifo: live slots, oldest first
  std::size_t bytes_ = 0;
  ReplayStats counts_;
  double age_sum_ = 0;
};

/// A replay memory holding samples of type `Sample` (for the trainer: a pair of tensors).
template <typename Sample>
class ReplayMemory {
 public:
  explicit ReplayMemory(const ReplayConfig& config) : index_(config) {}

  /// Offers a sample of `bytes` bytes; false when the policy did not take it.
  bool add(Sample sample, std::size_t bytes) {
    ReplayIndex::Offer offer = index_.offer(bytes);
    for (std::size_t slot : offer.evicted) samples_[slot].reset();
    if (!offer.slot) return false;
    if (*offer.slot >= samples_.size()) samples_.resize(*offer.slot + 1);
    samples_[*offer.slot] = std::move(sample);
    return true;
  }
  /// `n` held samples drawn uniformly with replacement (pointers valid until the next add).
  std::vector<const Sample*> draw(std::size_t n) {
    std::vector<const Sample*> out;
    for (std::size_t slot : index_.draw(n)) out.push_back(&*samples_[slot]);
    return out;
  }
  bool ready() const noexcept { return index_.ready(); }
  std::size_t size() const noexcept { return index_.held(); }
  ReplayStats stats() const { return index_.stats(); }
  /// Every held sample, in slot order (for checkpoints and tests).
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (const auto& sample : samples_) {
      if (sample) visit(*sample);
    }
  }

 private:
  ReplayIndex index_;
  std::vector<std::optional<Sample>> samples_;  // by slot
};

}  // namespace slipstream::train

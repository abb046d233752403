// Memory bounds of the network front end shared by every connection: the budget for arguments
// being received (max-pending-input), the per-request limit (client-query-buffer-limit), Redis's
// client-output-buffer-limit for normal clients, and the recent peaks that INFO reports.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/resp_parser.hpp"

namespace slipstream::server {

/// Redis's client-output-buffer-limit for one class of clients: a client whose replies waiting to
/// be sent reach `hard` bytes is dropped at once; one that stays at `soft` bytes or more for more
/// than `soft_seconds` is dropped then. 0 turns a limit off.
struct OutputBufferLimit {
  std::size_t hard = 0;
  std::size_t soft = 0;
  std::uint64_t soft_seconds = 0;
  bool operator==(const OutputBufferLimit&) const = default;
};

/// Parses a size as Redis's configuration does: a number of bytes, optionally with a unit
/// (k = 1000, kb = 1024, m, mb, g, gb; any case). Returns nothing for anything else.
std::optional<std::size_t> parse_memory_size(std::string_view text);

/// Parses "HARD SOFT SECONDS" or Redis's "normal HARD SOFT SECONDS" (several class groups may
/// follow one another; `replica`, `slave` and `pubsub` groups are accepted and ignored, as this
/// server has no such clients). On failure returns nothing and sets `error`.
std::optional<OutputBufferLimit> parse_output_buffer_limit(std::string_view text,
                                                           std::string* error);
/// "normal HARD SOFT SECONDS", as CONFIG GET shows it.
std::string format_output_buffer_limit(const OutputBufferLimit& limit);

/// The default of max-pending-input: a quarter of the physical memory, at least 256 MiB.
std::size_t default_max_pending_input();

/// The largest value observed in the last few seconds (Redis's client_recent_max_*_buffer):
/// eight one-second slots, each packing its second and its maximum into one atomic word.
/// Thread-safe and lock-free; values are recorded when connections are active, not sampled.
class RecentPeak {
 public:
  void observe(std::size_t bytes) noexcept;
  std::size_t get() const noexcept;

 private:
  static constexpr std::size_t kSlots = 8;
  std::array<std::atomic<std::uint64_t>, kSlots> slots_{};
};

/// The settings above, changeable at run time (CONFIG SET) while connections read them, and the
/// counts of clients dropped by them. Thread-safe: every field is atomic (a reader racing a
/// CONFIG SET of the output limit may see one field new and another old, for one check).
class ClientLimits {
 public:
  /// `max_pending_input` 0 means default_max_pending_input().
  ClientLimits(std::size_t query_buffer_limit, OutputBufferLimit output_limit,
               std::size_t max_pending_input);
  ClientLimits(const ClientLimits&) = delete;
  ClientLimits& operator=(const ClientLimits&) = delete;

  std::size_t query_buffer_limit() const noexcept { return query_buffer_limit_.load(); }
  void set_query_buffer_limit(std::size_t bytes) noexcept { query_buffer_limit_.store(bytes); }

  OutputBufferLimit output_limit() const noexcept {
    return {output_hard_.load(std::memory_order_relaxed),
            output_soft_.load(std::memory_order_relaxed),
            output_soft_seconds_.load(std::memory_order_relaxed)};
  }
  void set_output_limit(const OutputBufferLimit& limit) noexcept;

  /// The budget every connection's parser reserves from.
  InputBudget& input_budget() noexcept { return input_budget_; }
  const InputBudget& input_budget() const noexcept { return input_budget_; }
  /// 0 restores the default.
  void set_max_pending_input(std::size_t bytes) noexcept;

  RecentPeak& input_peak() noexcept { return input_peak_; }
  RecentPeak& output_peak() noexcept { return output_peak_; }
  const RecentPeak& input_peak() const noexcept { return input_peak_; }
  const RecentPeak& output_peak() const noexcept { return output_peak_; }

  /// Clients closed for a request over client-query-buffer-limit or max-pending-input.
  std::atomic<std::uint64_t> query_buffer_disconnections{0};
  /// Clients dropped for client-output-buffer-limit.
  std::atomic<std::uint64_t> output_buffer_disconnections{0};

 private:
  std::atomic<std::size_t> query_buffer_limit_;
  std::atomic<std::size_t> output_hard_, output_soft_;
  std::atomic<std::uint64_t> output_soft_seconds_;
  InputBudget input_budget_;
  RecentPeak input_peak_, output_peak_;
};

}  // namespace slipstream::server

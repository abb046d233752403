// Client memory limits and recent peaks; see client_limits.hpp.
#include "server/net/client_limits.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <vector>
#include "common/ascii.hpp"

namespace slipstream::server {
namespace {

std::string lower(std::string_view text) { return ascii_lower(text); }

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

std::uint64_t steady_seconds() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// A slot of RecentPeak: the second (its low bits) above the value (clamped to 16 TiB).
constexpr unsigned kValueBits = 44;
constexpr std::uint64_t kValueMask = (std::uint64_t{1} << kValueBits) - 1;
constexpr std::uint64_t kSecondMask = (std::uint64_t{1} << (64 - kValueBits)) - 1;

}  // namespace

std::optional<std::size_t> parse_memory_size(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc()) return std::nullopt;
  const std::string unit = lower(text.substr(digits));
  std::uint64_t multiplier = 0;
  if (unit.empty() || unit == "b") {
    multiplier = 1;
  } else if (unit == "k") {
    multiplier = 1000;
  } else if (unit == "kb") {
    multiplier = 1024;
  } else if (unit == "m") {
    multiplier = 1000 * 1000;
  } else if (unit == "mb") {
    multiplier = 1024 * 1024;
  } else if (unit == "g") {
    multiplier = 1000ull * 1000 * 1000;
  } else if (unit == "gb") {
    multiplier = 1024ull * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  if (value > SIZE_MAX / multiplier) return std::nullopt;
  return static_cast<std::size_t>(value * multiplier);
}

std::optional<OutputBufferLimit> parse_output_buffer_limit(std::string_view text,
                                                           std::string* error) {
  auto fail = [&](std::string message) -> std::optional<OutputBufferLimit> {
    if (error != nullptr) *error = std::move(message);
    return std::nullopt;
  };
  std::vector<std::string_view> words = split_words(text);
  std::optional<std::string> implicit;  // "HARD SOFT SECONDS" alone: the normal class
  if (words.size() == 3) implicit = "normal";
  if (!implicit && (words.empty() || words.size() % 4 != 0)) {
    return fail("expected 'HARD SOFT SECONDS' or groups of 'normal HARD SOFT SECONDS'");
  }
  std::optional<OutputBufferLimit> normal;
  for (std::size_t i = 0; i < words.size(); i += implicit ? 3 : 4) {
    const std::string klass = implicit ? *implicit : lower(words[i]);
    const std::size_t first = implicit ? i : i + 1;
    if (klass != "normal" && klass != "replica" && klass != "slave" && klass != "pubsub") {
      return fail("unknown client class '" + std::string(words[i]) +
                  "' (expected normal, replica or pubsub)");
    }
    auto hard = parse_memory_size(words[first]);
    auto soft = parse_memory_size(words[first + 1]);
    std::uint64_t seconds = 0;
    std::string_view seconds_text = words[first + 2];
    auto [ptr, ec] =
        std::from_chars(seconds_text.data(), seconds_text.data() + seconds_text.size(), seconds);
    if (!hard || !soft) return fail("limits must be byte counts, optionally with a unit (64mb)");
    if (ec != std::errc() || ptr != seconds_text.data() + seconds_text.size()) {
      return fail("the soft limit's seconds must be a non-negative integer");
    }
    if (klass == "normal") normal = OutputBufferLimit{*hard, *soft, seconds};
  }
  if (!normal) return fail("no limit given for the normal class");
  return normal;
}

std::string format_output_buffer_limit(const OutputBufferLimit& limit) {
  return "normal " + std::to_string(limit.hard) + " " + std::to_string(limit.soft) + " " +
         std::to_string(limit.soft_seconds);
}

std::size_t default_max_pending_input() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const std::size_t floor = 256ull << 20;
  if (pages <= 0 || page_size <= 0) return 2ull << 30;
  return std::max(floor, static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size) / 4);
}

void RecentPeak::observe(std::size_t bytes) noexcept {
  const std::uint64_t second = steady_seconds();
  const std::uint64_t tag = second & kSecondMask;
  const std::uint64_t value = std::min<std::uint64_t>(bytes, kValueMask);
  std::atomic<std::uint64_t>& slot = slots_[second % kSlots];
  std::uint64_t current = slot.load(std::memory_order_relaxed);
  while (true) {
    // A slot last written in an earlier second is stale: overwrite it whatever it holds.
    if ((current >> kValueBits) == tag && (current & kValueMask) >= value) return;
    if (slot.compare_exchange_weak(current, (tag << kValueBits) | value,
                                   std::memory_order_relaxed)) {
      return;
    }
  }
}

std::size_t RecentPeak::get() const noexcept {
  const std::uint64_t now = steady_seconds() & kSecondMask;
  std::uint64_t peak = 0;
  for (const auto& slot : slots_) {
    const std::uint64_t word = slot.load(std::memory_order_relaxed);
    const std::uint64_t age = (now - (word >> kValueBits)) & kSecondMask;
    if (word != 0 && age < kSlots) peak = std::max(peak, word & kValueMask);
  }
  return static_cast<std::size_t>(peak);
}

ClientLimits::ClientLimits(std::size_t query_buffer_limit, OutputBufferLimit output_limit,
                           std::size_t max_pending_input)
    : query_buffer_limit_(query_buffer_limit),
      output_hard_(output_limit.hard),
      output_soft_(output_limit.soft),
      output_soft_seconds_(output_limit.soft_seconds),
      input_budget_(max_pending_input != 0 ? max_pending_input : default_max_pending_input()) {}

void ClientLimits::set_output_limit(const OutputBufferLimit& limit) noexcept {
  output_hard_.store(limit.hard, std::memory_order_relaxed);
  output_soft_.store(limit.soft, std::memory_order_relaxed);
  output_soft_seconds_.store(limit.soft_seconds, std::memory_order_relaxed);
}

void ClientLimits::set_max_pending_input(std::size_t bytes) noexcept {
  input_budget_.set_capacity(bytes != 0 ? bytes : default_max_pending_input());
}

}  // namespace slipstream::server

// ChunkStrategy::parse: turns a case-insensitive strategy name into the strategy's parts.
#include <memory>
#include <string>

#include "slipstream/stream_chunks.hpp"
#include "stream/strategies.hpp"

namespace slipstream::stream {
namespace {

constexpr std::string_view kHostnamePrefix = "hostname_";
constexpr std::string_view kDiscard = "discard";
constexpr std::string_view kFail = "fail";

std::string to_lower_ascii(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

std::string valid_names() {
  std::string full;
  for (const auto& info : full_strategies()) {
    if (!full.empty()) full += ", ";
    full += info.name;
  }
  return "valid names (case-insensitive) are " + full +
         ", and hostname_<within>_<fallback> where <within> is one of those and <fallback> is "
         "one of those, " +
         std::string(kDiscard) + " or " + std::string(kFail);
}

[[noreturn]] void throw_unknown(std::string_view name, const std::string& reason) {
  throw StrategyError("unknown chunk strategy '" + std::string(name) + "'" + reason + "; " +
                      valid_names());
}

}  // namespace

ChunkStrategy ChunkStrategy::parse(std::string_view name, const StrategyOptions& options) {
  auto impl = std::make_shared<Impl>();
  impl->name = to_lower_ascii(name);
  impl->options = options;

  const std::string_view lower = impl->name;
  if (const auto* full = find_full_strategy(lower)) {
    impl->primary = full;
    return ChunkStrategy(std::move(impl));
  }
  if (!lower.starts_with(kHostnamePrefix)) throw_unknown(name, "");

  // Split at the last underscore, as openPMD-api does; full strategy names have none.
  const std::string_view rest = lower.substr(kHostnamePrefix.size());
  const auto underscore = rest.rfind('_');
  if (underscore == std::string_view::npos) {
    throw_unknown(name, ": a hostname_ strategy needs both <within> and <fallback>");
  }
  const std::string_view within = rest.substr(0, underscore);
  const std::string_view fallback = rest.substr(underscore + 1);
  impl->primary = find_full_strategy(within);
  if (impl->primary == nullptr) {
    throw_unknown(name, ": <within> '" + std::string(within) + "' is not a full strategy");
  }
  impl->by_hostname = true;
  if (fallback == kDiscard) {
    impl->leftover_policy = LeftoverPolicy::kDiscard;
  } else if (fallback == kFail) {
    impl->leftover_policy = LeftoverPolicy::kFail;
  } else {
    impl->leftover_policy = LeftoverPolicy::kAssign;
    impl->fallback = find_full_strategy(fallback);
    if (impl->fallback == nullptr) {
      throw_unknown(name, ": <fallback> '" + std::string(fallback) +
                              "' is neither a full strategy nor discard or fail");
    }
  }
  return ChunkStrategy(std::move(impl));
}

}  // namespace slipstream::stream

// Key positions of RedisAI run commands; see command_keys.hpp.
#include "common/command_keys.hpp"

#include <strings.h>

#include <charconv>
#include <cstdint>
#include <initializer_list>

namespace slipstream {
namespace {

bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool is_one_of(std::string_view word, std::initializer_list<std::string_view> words) {
  for (auto w : words) {
    if (equals_nocase(word, w)) return true;
  }
  return false;
}

// "KEYWORD n item..." sections from `start`; items of `key_sections` are keys, of
// `other_sections` not; "TIMEOUT ms" skipped; stops at anything else.
std::vector<std::size_t> counted_sections(std::span<const std::string_view> args, std::size_t start,
                                          std::initializer_list<std::string_view> key_sections,
                                          std::initializer_list<std::string_view> other_sections) {
  std::vector<std::size_t> positions;
  std::size_t i = start;
  while (i < args.size()) {
    std::string_view word = args[i];
    if (equals_nocase(word, "TIMEOUT")) {
      i += 2;
      continue;
    }
    bool keys = is_one_of(word, key_sections);
    if (!keys && !is_one_of(word, other_sections)) break;
    if (i + 1 >= args.size()) break;
    std::int64_t count = -1;
    std::string_view text = args[i + 1];
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (ec != std::errc() || end != text.data() + text.size() || count < 0) break;
    i += 2;
    for (std::int64_t k = 0; k < count && i < args.size(); ++k, ++i) {
      if (keys) positions.push_back(i);
    }
  }
  return positions;
}

// "[TIMEOUT ms] INPUTS in... OUTPUTS out..." from `start`; "$" is not a key.
std::vector<std::size_t> uncounted_sections(std::span<const std::string_view> args,
                                            std::size_t start) {
  std::vector<std::size_t> positions;
  bool in_keys = false;
  for (std::size_t i = start; i < args.size(); ++i) {
    if (!in_keys && equals_nocase(args[i], "TIMEOUT")) {
      ++i;
    } else if (equals_nocase(args[i], "INPUTS") || equals_nocase(args[i], "OUTPUTS")) {
      in_keys = true;
    } else if (in_keys && args[i] != "$") {
      positions.push_back(i);
    }
  }
  return positions;
}

}  // namespace

std::vector<std::size_t> redisai_run_key_positions(std::span<const std::string_view> args) {
  if (args.empty()) return {};
  std::string_view name = args[0];
  if (equals_nocase(name, "AI.MODELEXECUTE")) {
    return counted_sections(args, 2, {"INPUTS", "OUTPUTS"}, {});
  }
  if (equals_nocase(name, "AI.MODELRUN")) return uncounted_sections(args, 2);
  if (equals_nocase(name, "AI.SCRIPTEXECUTE")) {
    return counted_sections(args, 3, {"KEYS", "INPUTS", "OUTPUTS"}, {"ARGS"});
  }
  if (equals_nocase(name, "AI.SCRIPTRUN")) return uncounted_sections(args, 3);
  return {};
}

}  // namespace slipstream

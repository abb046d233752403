// Redis-style glob matching (KEYS, SCAN MATCH, CONFIG GET): * ? [abc] [^a] [a-z] and \ escapes.
#pragma once

#include <string_view>

namespace slipstream {

/// True when `text` matches `pattern`. Matching is byte-wise and case-sensitive unless `nocase`.
bool glob_match(std::string_view pattern, std::string_view text, bool nocase = false) noexcept;

}  // namespace slipstream

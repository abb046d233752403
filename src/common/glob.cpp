// Redis-style glob matching; see glob.hpp.
#include "common/glob.hpp"

#include <cctype>

namespace slipstream {
namespace {

bool same(char a, char b, bool nocase) {
  if (!nocase) return a == b;
  return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
}

// Matches a bracket class starting just after '['. On return `p` points past the closing ']'
// (or at the end of a malformed pattern, which Redis treats as closing the class).
bool match_class(std::string_view pattern, std::size_t& p, char c, bool nocase) {
  bool negate = false;
  if (p < pattern.size() && pattern[p] == '^') {
    negate = true;
    ++p;
  }
  bool matched = false;
  while (p < pattern.size() && pattern[p] != ']') {
    if (pattern[p] == '\\' && p + 1 < pattern.size()) {
      ++p;
      if (same(pattern[p], c, nocase)) matched = true;
    } else if (p + 2 < pattern.size() && pattern[p + 1] == '-' && pattern[p + 2] != ']') {
      char lo = pattern[p], hi = pattern[p + 2];
      if (lo > hi) std::swap(lo, hi);
      unsigned char uc = static_cast<unsigned char>(c);
      if (nocase) uc = static_cast<unsigned char>(std::tolower(uc));
      auto l = static_cast<unsigned char>(nocase ? std::tolower(lo) : lo);
      auto h = static_cast<unsigned char>(nocase ? std::tolower(hi) : hi);
      if (uc >= l && uc <= h) matched = true;
      p += 2;
    } else if (same(pattern[p], c, nocase)) {
      matched = true;
    }
    ++p;
  }
  if (p < pattern.size()) ++p;  // skip ']'
  return negate ? !matched : matched;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text, bool nocase) noexcept {
  // Iterative matcher with single-star backtracking: linear in practice, never exponential.
  std::size_t p = 0, t = 0;
  std::size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '*') {
        while (p < pattern.size() && pattern[p] == '*') ++p;
        if (p == pattern.size()) return true;
        star_p = p;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        std::size_t q = p + 1;
        if (match_class(pattern, q, text[t], nocase)) {
          p = q;
          ++t;
          continue;
        }
      } else {
        if (pc == '\\' && p + 1 < pattern.size()) {
          if (same(pattern[p + 1], text[t], nocase)) {
            p += 2;
            ++t;
            continue;
          }
        } else if (same(pc, text[t], nocase)) {
          ++p;
          ++t;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace slipstream

// Tests for Redis-style glob matching (src/common/glob.hpp): the metacharacters, escapes, case
// folding, backtracking, and that pathological patterns stay fast.
#include "common/glob.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace slipstream {
namespace {

struct Case {
  const char* pattern;
  const char* text;
  bool matches;
};

void expect_cases(const std::vector<Case>& cases, bool nocase = false) {
  for (const auto& c : cases) {
    EXPECT_EQ(glob_match(c.pattern, c.text, nocase), c.matches)
        << "pattern '" << c.pattern << "' text '" << c.text << "' nocase " << nocase;
  }
}

TEST(Glob, Literals) {
  expect_cases({
      {"", "", true},
      {"", "a", false},
      {"a", "", false},
      {"abc", "abc", true},
      {"abc", "abd", false},
      {"abc", "ab", false},
      {"ab", "abc", false},
  });
}

TEST(Glob, Star) {
  expect_cases({
      {"*", "", true},
      {"*", "anything", true},
      {"**", "", true},
      {"a*", "a", true},
      {"a*", "abc", true},
      {"a*", "ba", false},
      {"*a", "bca", true},
      {"*a", "ab", false},
      {"a*b*c", "aXbYc", true},
      {"a*b*c", "abc", true},
      {"a*b*c", "acb", false},
      {"h*llo", "hllo", true},
      {"h*llo", "heeeello", true},
      {"*.tensor", "step:12.tensor", true},
      {"run:*:step:*", "run:7:step:", true},
      {"run:*:step:*", "run:7:stop:1", false},
  });
}

TEST(Glob, QuestionMark) {
  expect_cases({
      {"?", "a", true},
      {"?", "", false},
      {"?", "ab", false},
      {"h?llo", "hello", true},
      {"h?llo", "hllo", false},
      {"??", "ab", true},
      {"*?", "", false},
      {"*?", "a", true},
  });
}

TEST(Glob, BracketClasses) {
  expect_cases({
      {"h[ae]llo", "hello", true},
      {"h[ae]llo", "hallo", true},
      {"h[ae]llo", "hillo", false},
      {"h[^e]llo", "hallo", true},
      {"h[^e]llo", "hello", false},
      {"h[a-b]llo", "hbllo", true},
      {"h[a-b]llo", "hcllo", false},
      {"h[b-a]llo", "hallo", true},  // reversed range, as Redis
      {"[0-9][0-9]", "42", true},
      {"[0-9][0-9]", "4x", false},
      {"[a-cx-z]", "y", true},
      {"[a-cx-z]", "m", false},
      {"[^a-c]", "d", true},
      {"[^a-c]", "b", false},
      {"[]", "a", false},   // an empty class matches nothing
      {"[^]", "a", true},   // and its negation anything
      {"[abc", "a", true},  // an unterminated class ends at the end of the pattern
      {"[abc", "ab", false},
      {"[\\]]", "]", true},  // an escaped ']' inside a class
      {"[\\-]", "-", true},
      {"[a\\-z]", "b", false},  // escaped '-' is not a range
      {"[a\\-z]", "-", true},
      {"[*]", "*", true},
      {"[*]", "a", false},
      {"[?]", "a", false},
  });
}

TEST(Glob, Escapes) {
  expect_cases({
      {"\\*", "*", true},
      {"\\*", "a", false},
      {"\\?", "?", true},
      {"\\?", "a", false},
      {"\\[a]", "[a]", true},
      {"\\[a]", "a", false},
      {"a\\\\b", "a\\b", true},
      {"\\a", "a", true},
      {"ab\\", "ab\\", true},  // a trailing backslash is literal
      {"*\\*", "abc*", true},
      {"*\\*", "abc", false},
  });
}

TEST(Glob, NoCase) {
  expect_cases(
      {
          {"HeLLo", "hello", true},
          {"h*O", "HELLO", true},
          {"[A-C]x", "bX", true},
          {"[a-c]x", "BX", true},
          {"[^A-C]", "b", false},
          {"[XYZ]", "y", true},
          {"\\A", "a", true},
      },
      /*nocase=*/true);
  expect_cases({{"HeLLo", "hello", false}, {"[A-C]", "b", false}});
}

TEST(Glob, BytesAreMatchedAsIs) {
  std::string text("a\0b\xff", 4);
  EXPECT_TRUE(glob_match(std::string_view("a\0b\xff", 4), text));
  EXPECT_TRUE(glob_match("a?b?", text));
  EXPECT_TRUE(glob_match("*\xff", text));
  EXPECT_TRUE(glob_match("[\xfe-\xff]", "\xff"));
}

TEST(Glob, BacktrackingFindsTheRightStarExtent) {
  expect_cases({
      {"*ab", "aab", true},
      {"*ab", "abab", true},
      {"*aab", "aaab", true},
      {"a*a", "aaaa", true},
      {"a*ab", "aaaac", false},
      {"*a*b*c*", "xxaxxbxxcxx", true},
      {"*a*b*c*", "xxcxxbxxaxx", false},
      {"*[0-9]x", "a1b2x", true},
      {"*[0-9]x", "a1b2y", false},
      {"*?c", "abc", true},
      {"*?c", "c", false},
      {"a*?*?b", "axyb", true},
      {"a*?*?b", "axb", false},
      {"*mississippi*", "mississimississippi", true},
      {"*sip*", "mississippi", true},
      {"m*iss*ppi", "mississippi", true},
  });
}

TEST(Glob, PathologicalPatternsStayFast) {
  std::string pattern;
  for (int i = 0; i < 30; ++i) pattern += "a*";
  pattern += "b";
  std::string text(20000, 'a');
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(glob_match(pattern, text));
  EXPECT_TRUE(glob_match(pattern, text + "b"));
  EXPECT_FALSE(glob_match("*" + std::string(100, '?') + "b", text));
  EXPECT_FALSE(glob_match("*[a]*[a]*[a]*[a]*[a]*[a]*c", text, /*nocase=*/true));
  auto elapsed = std::chrono::steady_clock::now() - start;
  // Exponential backtracking would take hours; a linear-ish matcher takes milliseconds. The bound
  // sits far from both, so that a sanitized build on a loaded machine cannot reach it.
  EXPECT_LT(elapsed, std::chrono::seconds(10));
}

}  // namespace
}  // namespace slipstream

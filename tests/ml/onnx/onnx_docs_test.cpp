// docs/models.md lists exactly the operators the ONNX lowering knows (between its operator
// markers, one `name` each): adding a lowering without documenting it fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "ml/onnx/lower.hpp"

namespace slipstream::ml::onnx_import {
namespace {

TEST(OnnxDocs, ListsEveryOperator) {
  std::ifstream in(SLIPSTREAM_SOURCE_DIR "/docs/models.md");
  ASSERT_TRUE(in) << "cannot read docs/models.md";
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::size_t begin = text.find("<!-- operators");
  const std::size_t end = text.find("<!-- /operators -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string section = text.substr(begin, end - begin);
  std::set<std::string> documented;
  const std::regex name("`([A-Za-z0-9.]+)`");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), name);
       it != std::sregex_iterator(); ++it) {
    documented.insert((*it)[1]);
  }
  const std::vector<std::string> supported = supported_operators();
  const std::set<std::string> lowered(supported.begin(), supported.end());
  for (const std::string& op : lowered) {
    EXPECT_TRUE(documented.count(op)) << op << " is lowered but not listed in docs/models.md";
  }
  for (const std::string& op : documented) {
    EXPECT_TRUE(lowered.count(op)) << op << " is listed in docs/models.md but not lowered";
  }
}

}  // namespace
}  // namespace slipstream::ml::onnx_import

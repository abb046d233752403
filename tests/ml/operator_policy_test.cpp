// The operator policy of stored code (src/ml/operator_policy.hpp) against the operators actually
// registered in the linked libtorch, and the TorchScript backend's load-time check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <regex>
#include <set>

#include "ml/backend.hpp"
#include "ml/operator_policy.hpp"

namespace slipstream::ml {
namespace {

using ::testing::HasSubstr;

TEST(OperatorPolicyTest, AllowsMathAndControlFlow) {
  for (const char* op : {"aten::add", "aten::linear", "aten::relu_", "prim::If", "prim::Loop",
                         "prim::Constant", "prim::CallMethod", "quantized::linear"}) {
    EXPECT_FALSE(refused_operator_reason(op)) << op;
  }
}

TEST(OperatorPolicyTest, RefusesFileNetworkAndForeignNamespaces) {
  for (const char* op : {"aten::from_file", "aten::save", "prim::rpc_async", "prim::PythonOp",
                         "c10d::allreduce_", "profiler::_record_function_enter", "my_ops::open",
                         "noNamespace"}) {
    EXPECT_TRUE(refused_operator_reason(op)) << op;
  }
}

// Why this test exists: the deny list inside the allowed namespaces is only as good as its
// completeness. Every registered operator that takes a string argument named like a file or path
// must be refused; a new libtorch that adds one fails here until the list is updated.
TEST(OperatorPolicyTest, EveryRegisteredOperatorTakingAFileNameIsRefused) {
  const std::regex file_like("file|path|dir|url|command", std::regex::icase);
  std::set<std::string> unrefused;
  std::size_t checked = 0;
  for (const auto& op : torch::jit::getAllOperators()) {
    const c10::FunctionSchema& schema = op->schema();
    ++checked;
    for (const c10::Argument& argument : schema.arguments()) {
      const std::string type = argument.type()->str();
      if (type.find("str") == std::string::npos) continue;
      if (!std::regex_search(argument.name(), file_like)) continue;
      if (!refused_operator_reason(schema.name())) unrefused.insert(schema.name());
    }
  }
  EXPECT_GT(checked, 1000u);  // the registry was really read
  EXPECT_TRUE(unrefused.empty()) << "allowed operators taking a file name: "
                                 << ::testing::PrintToString(unrefused);
}

TEST(OperatorPolicyTest, CheckedBackendRefusesAScriptCallingADeniedOperator) {
  // aten::save takes a file name; any way of spelling a call to it must be refused at load time.
  const std::string source =
      "def f(x):\n"
      "    torch.save(x, '/tmp/slipstream-should-not-exist')\n"
      "    return x\n";
  auto open_backend = make_torch_backend({});
  std::string error;
  auto unchecked = open_backend->load_script(source, Device{}, &error);
  if (!unchecked) GTEST_SKIP() << "this libtorch does not compile torch.save in scripts: " << error;
  // Not through make_torch_backend's shared thread settings: a checked backend is a different
  // object with its own policy.
  auto checked = make_torch_backend({.check_operators = true});
  EXPECT_FALSE(checked->load_script(source, Device{}, &error));
  EXPECT_THAT(error, HasSubstr("aten::save"));
}

TEST(OperatorPolicyTest, CheckedBackendWalksNestedBlocksAndCalledFunctions) {
  const std::string source =
      "def helper(x):\n"
      "    if bool(x.sum() > 0):\n"
      "        for i in range(2):\n"
      "            torch.save(x, 'f')\n"
      "    return x\n"
      "def entry(x):\n"
      "    return helper(x) * 2\n";
  std::string error;
  if (!make_torch_backend({})->load_script(source, Device{}, &error)) {
    GTEST_SKIP() << "this libtorch does not compile torch.save in scripts: " << error;
  }
  auto checked = make_torch_backend({.check_operators = true});
  EXPECT_FALSE(checked->load_script(source, Device{}, &error));
  EXPECT_THAT(error, HasSubstr("aten::save"));
  EXPECT_THAT(error, HasSubstr("helper"));
}

TEST(OperatorPolicyTest, CheckedBackendAcceptsOrdinaryScripts) {
  auto checked = make_torch_backend({.check_operators = true});
  std::string error;
  auto script = checked->load_script(
      "def f(tensors: List[Tensor], keys: List[str], args: List[str]):\n"
      "    x = tensors[0]\n"
      "    for i in range(3):\n"
      "        x = torch.relu(x) + 1.0\n"
      "    return x.sum(0), x.mean()\n",
      Device{}, &error);
  EXPECT_TRUE(script) << error;
}

}  // namespace
}  // namespace slipstream::ml

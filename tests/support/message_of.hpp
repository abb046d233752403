// message_of<E>(call): the text of the E that `call` throws; the test fails when it throws nothing.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace slipstream::testing {

template <typename E, typename F>
std::string message_of(F&& call) {
  try {
    std::forward<F>(call)();
  } catch (const E& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected an exception";
  return {};
}

}  // namespace slipstream::testing

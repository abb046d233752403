// check_pickle_bounds: every opcode's argument within the pickle, and a STOP at the end.
#include "ml/pickle_check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace slipstream::ml {
namespace {

// A string literal with its NUL bytes, without the terminating one.
template <std::size_t N>
std::string bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

TEST(PickleCheck, AcceptsWhatTorchScriptWrites) {
  // (1, 'ab', b'c', 2.5, torch-style GLOBAL and BINPERSID, memo PUT/GET), protocol 2.
  // (Literals are split where a hex escape would run into the next character.)
  const std::string pickle = bytes(
      "\x80\x02(K\x01X\x02\x00\x00\x00" "abC\x01" "cG@\x04\x00\x00\x00\x00\x00\x00"
      "ctorch._utils\n_rebuild_tensor_v2\nq\x00h\x00M\x00\x01J\x01\x00\x00\x00"
      "\x8c\x01xQ\x8a\x01\x05tq\x01.");
  EXPECT_EQ(check_pickle_bounds(pickle), std::nullopt);
  EXPECT_EQ(check_pickle_bounds(bytes("\x80\x02).")), std::nullopt);
  EXPECT_EQ(check_pickle_bounds("I12\nL5L\n."), std::nullopt);  // protocol 0 text arguments
  // What follows STOP is not read.
  EXPECT_EQ(check_pickle_bounds(bytes("\x80\x02N.garbage\xff")), std::nullopt);
}

TEST(PickleCheck, RefusesLengthsPastTheEnd) {
  auto refused = [](const std::string& pickle) {
    auto problem = check_pickle_bounds(pickle);
    return problem ? *problem : std::string("accepted");
  };
  EXPECT_EQ(refused(bytes("\x80\x02X\x00\x00\x00\xf0.")),
            "pickle declares 4026531840 bytes where 1 remain at byte 2");
  EXPECT_NE(refused(bytes("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xff.")).find("declares"),
            std::string::npos);  // BINUNICODE8 of 2^64 - 1: no overflow
  EXPECT_NE(refused(bytes("\x80\x02\x8c\x05" "ab.")).find("declares 5"), std::string::npos);
  EXPECT_NE(refused(bytes("\x80\x02\x8b\xff\xff\xff\xff.")).find("negative"),
            std::string::npos);
  EXPECT_NE(refused(bytes("\x80\x02X\x01\x00")).find("length runs past"), std::string::npos);
  EXPECT_NE(refused(bytes("\x80\x02J\x01\x00")).find("argument runs past"), std::string::npos);
  EXPECT_NE(refused("ctorch\nno_newline").find("line end"), std::string::npos);
  EXPECT_NE(refused(bytes("\x80\x02\xff.")).find("unknown pickle opcode 0xff at byte 2"),
            std::string::npos);
  EXPECT_EQ(refused(bytes("\x80\x02K\x01")), "pickle ends without STOP");
  // Memo entries numbered past what any pickler could have stored so far (libtorch would grow
  // its memo table to 2^32 entries).
  EXPECT_EQ(refused(bytes("\x80\x02)r\xf0\xff\xff\xff.")),
            "pickle memo entry 4294967280 after only 2 opcodes at byte 3");
  EXPECT_NE(refused(bytes("\x80\x02)q\x05.")).find("memo entry 5"), std::string::npos);
  EXPECT_EQ(refused(bytes("\x80\x02)q\x02.")), "accepted");
  EXPECT_EQ(refused(""), "pickle ends without STOP");
}

}  // namespace
}  // namespace slipstream::ml

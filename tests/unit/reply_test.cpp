// Tests for the RESP reply builder (src/server/reply.hpp): RESP2 and RESP3 shapes, double
// formatting, error sanitising, and zero-copy pieces for large shared payloads.
#include "server/net/reply.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>

namespace slipstream::server {
namespace {

using namespace std::string_literals;

// Everything the buffer would write, concatenated.
std::string wire(ReplyBuffer& reply) {
  std::string out;
  for (const auto& piece : reply.pieces()) out.append(piece.data, piece.size);
  return out;
}

std::string build(int protocol, const std::function<void(ReplyBuffer&)>& fn) {
  ReplyBuffer reply;
  reply.set_protocol(protocol);
  fn(reply);
  return wire(reply);
}

TEST(Reply, SimpleTypes) {
  ReplyBuffer reply;
  EXPECT_TRUE(reply.empty());
  EXPECT_EQ(reply.protocol(), 2);
  reply.simple("OK");
  reply.integer(-42);
  reply.integer(std::numeric_limits<std::int64_t>::min());
  reply.bulk("hello");
  reply.bulk("");
  reply.bulk(std::string_view("a\0\r\n", 4));
  reply.array(3);
  reply.raw("+raw\r\n");
  EXPECT_FALSE(reply.empty());
  EXPECT_EQ(wire(reply),
            "+OK\r\n:-42\r\n:-9223372036854775808\r\n$5\r\nhello\r\n"
            "$0\r\n\r\n$4\r\na\0\r\n\r\n*3\r\n+raw\r\n"s);
  reply.clear();
  EXPECT_TRUE(reply.empty());
  EXPECT_EQ(wire(reply), "");
}

TEST(Reply, NullsDependOnProtocol) {
  EXPECT_EQ(build(2, [](ReplyBuffer& r) { r.null(); }), "$-1\r\n");
  EXPECT_EQ(build(2, [](ReplyBuffer& r) { r.null_array(); }), "*-1\r\n");
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.null(); }), "_\r\n");
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.null_array(); }), "_\r\n");
}

TEST(Reply, MapsAndSetsDependOnProtocol) {
  auto map = [](ReplyBuffer& r) {
    r.map(2);
    r.bulk("a");
    r.integer(1);
    r.bulk("b");
    r.integer(2);
  };
  EXPECT_EQ(build(2, map), "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n");
  EXPECT_EQ(build(3, map), "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n");
  EXPECT_EQ(build(2, [](ReplyBuffer& r) { r.map(0); }), "*0\r\n");
  EXPECT_EQ(build(2, [](ReplyBuffer& r) { r.set(2); }), "*2\r\n");
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.set(2); }), "~2\r\n");
}

TEST(Reply, DoublesUseSeventeenSignificantDigits) {
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.double_value(1.5); }), ",1.5\r\n");
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.double_value(0.1); }), ",0.10000000000000001\r\n");
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.double_value(-3); }), ",-3\r\n");
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.double_value(1e300); }),
            ",1.0000000000000001e+300\r\n");
  EXPECT_EQ(build(2, [](ReplyBuffer& r) { r.double_value(0.1); }),
            "$19\r\n0.10000000000000001\r\n");
  EXPECT_EQ(build(2, [](ReplyBuffer& r) { r.double_value(2); }), "$1\r\n2\r\n");
}

TEST(Reply, SpecialDoubles) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(build(3, [&](ReplyBuffer& r) { r.double_value(inf); }), ",inf\r\n");
  EXPECT_EQ(build(3, [&](ReplyBuffer& r) { r.double_value(-inf); }), ",-inf\r\n");
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.double_value(std::nan("")); }), ",nan\r\n");
  EXPECT_EQ(build(2, [&](ReplyBuffer& r) { r.double_value(-inf); }), "$4\r\n-inf\r\n");
}

TEST(Reply, VerbatimDependsOnProtocol) {
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.verbatim("line1\nline2"); }),
            "=15\r\ntxt:line1\nline2\r\n");
  EXPECT_EQ(build(2, [](ReplyBuffer& r) { r.verbatim("line1\nline2"); }),
            "$11\r\nline1\nline2\r\n");
}

TEST(Reply, ErrorsLoseLineBreaks) {
  std::string out = build(2, [](ReplyBuffer& r) { r.error("ERR bad\r\nthing\nhere\r"); });
  EXPECT_EQ(out.substr(0, 1), "-");
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out.substr(out.size() - 2), "\r\n");
  std::string body = out.substr(1, out.size() - 3);
  EXPECT_EQ(body.find('\r'), std::string::npos);
  EXPECT_EQ(body.find('\n'), std::string::npos);
  EXPECT_EQ(body.rfind("ERR bad", 0), 0u);
  EXPECT_NE(body.find("thing"), std::string::npos);
  EXPECT_EQ(build(3, [](ReplyBuffer& r) { r.error("WRONGTYPE x"); }), "-WRONGTYPE x\r\n");
}

TEST(Reply, LargeSharedBulkIsReferencedNotCopied) {
  auto owner = std::make_shared<std::string>(100000, 'p');
  std::weak_ptr<std::string> watch = owner;
  ReplyBuffer reply;
  reply.simple("before");
  reply.bulk_shared(owner, *owner);
  reply.simple("after");
  const char* payload = owner->data();
  owner.reset();
  EXPECT_FALSE(watch.expired()) << "the reply must keep the payload alive";
  EXPECT_EQ(reply.owned_bytes(), std::string("+before\r\n$100000\r\n\r\n+after\r\n").size());

  auto pieces = reply.pieces();
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(std::string(pieces[0].data, pieces[0].size), "+before\r\n$100000\r\n");
  EXPECT_EQ(pieces[1].data, payload);
  EXPECT_EQ(pieces[1].size, 100000u);
  EXPECT_EQ(std::string(pieces[2].data, pieces[2].size), "\r\n+after\r\n");

  reply.clear();
  EXPECT_TRUE(watch.expired()) << "clear() must release the payload";
}

TEST(Reply, SharedBulkThresholdIs4096Bytes) {
  for (std::size_t size : {std::size_t{0}, std::size_t{100}, std::size_t{4095}}) {
    auto owner = std::make_shared<std::string>(size, 's');
    ReplyBuffer reply;
    reply.bulk_shared(owner, *owner);
    auto pieces = reply.pieces();
    ASSERT_EQ(pieces.size(), 1u) << size;
    std::string expected = "$";
    expected += std::to_string(size) + "\r\n" + *owner + "\r\n";
    EXPECT_EQ(std::string(pieces[0].data, pieces[0].size), expected);
    EXPECT_NE(pieces[0].data + pieces[0].size - size - 2, owner->data()) << "copied, not shared";
    std::weak_ptr<std::string> watch = owner;
    owner.reset();
    EXPECT_TRUE(watch.expired()) << "a copied payload needs no owner";
  }
  auto owner = std::make_shared<std::string>(4096, 'b');
  ReplyBuffer reply;
  reply.bulk_shared(owner, *owner);
  auto pieces = reply.pieces();
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[1].data, owner->data());
  EXPECT_EQ(wire(reply), "$4096\r\n" + *owner + "\r\n");
}

TEST(Reply, ConsecutiveSharedBulksAndAppendsAfterPieces) {
  auto a = std::make_shared<std::string>(5000, 'a');
  auto b = std::make_shared<std::string>(6000, 'b');
  ReplyBuffer reply;
  reply.array(2);
  reply.bulk_shared(a, *a);
  reply.bulk_shared(b, *b);
  std::string expected = "*2\r\n$5000\r\n" + *a + "\r\n$6000\r\n" + *b + "\r\n";
  EXPECT_EQ(wire(reply), expected);
  // pieces() may be called again, and appending afterwards keeps the order.
  reply.integer(7);
  EXPECT_EQ(wire(reply), expected + ":7\r\n");
  std::size_t shared = 0;
  for (const auto& piece : reply.pieces()) {
    if (piece.data == a->data() || piece.data == b->data()) ++shared;
  }
  EXPECT_EQ(shared, 2u);
}

TEST(Reply, SharedBulkFollowsProtocolIndependentShape) {
  auto owner = std::make_shared<std::string>(8192, 'x');
  EXPECT_EQ(build(3, [&](ReplyBuffer& r) { r.bulk_shared(owner, *owner); }),
            "$8192\r\n" + *owner + "\r\n");
}

}  // namespace
}  // namespace slipstream::server

// Unit tests of the client internals without a server: address parsing, request encoding, reply
// reading from a socket pair, Fortran/C transposes and the dataset metadata encoding.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "client/address.hpp"
#include "client/connection.hpp"
#include "client/dataset_access.hpp"
#include "client/request.hpp"
#include "common/tensor_layout.hpp"
#include "slipstream/dataset.hpp"
#include "slipstream/error.hpp"

namespace slipstream::client {
namespace {

std::string flatten(const Request& request) {
  std::string out;
  for (const auto& v : request.iovecs())
    out.append(static_cast<const char*>(v.iov_base), v.iov_len);
  return out;
}

TEST(Address, Forms) {
  Address tcp = parse_address("tcp://node12:6780");
  EXPECT_EQ(tcp.kind, Address::Kind::kTcp);
  EXPECT_EQ(tcp.host, "node12");
  EXPECT_EQ(tcp.port, 6780);
  EXPECT_EQ(parse_address("10.0.0.1:7000").to_string(), "tcp://10.0.0.1:7000");
  EXPECT_EQ(parse_address("[::1]:7000").host, "::1");
  EXPECT_EQ(parse_address("[::1]:7000").to_string(), "tcp://[::1]:7000");
  Address unix_socket = parse_address("unix:///tmp/s.sock");
  EXPECT_EQ(unix_socket.kind, Address::Kind::kUnix);
  EXPECT_EQ(unix_socket.path, "/tmp/s.sock");
  for (const char* bad :
       {"", "host", ":1", "host:", "host:0", "host:65536", "x://h:1", "unix://"}) {
    EXPECT_THROW(parse_address(bad), InvalidArgumentError) << bad;
  }
}

TEST(Request, EncodesRespAndBorrowsLargePayloads) {
  Request request;
  request.command({"SET", "k", "v"});
  request.command(2);
  request.arg("LLEN");
  request.arg(std::int64_t{-42});
  EXPECT_EQ(flatten(request),
            "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$4\r\nLLEN\r\n$3\r\n-42\r\n");
  EXPECT_EQ(request.command_count(), 2u);

  std::string payload(100000, 'p');
  Request big;
  big.command(2);
  big.arg("SET");
  big.arg(payload);
  bool borrowed = false;
  for (const auto& v : big.iovecs()) borrowed |= v.iov_base == payload.data();
  EXPECT_TRUE(borrowed);
  EXPECT_EQ(flatten(big), "*2\r\n$3\r\nSET\r\n$100000\r\n" + payload + "\r\n");
}

class SocketPair : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    connection_ = std::make_unique<Connection>(fds[0], "test-peer");
    peer_ = fds[1];
  }
  void TearDown() override { ::close(peer_); }
  void feed(std::string_view bytes) {
    ASSERT_EQ(::write(peer_, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  std::unique_ptr<Connection> connection_;
  int peer_ = -1;
};

TEST_F(SocketPair, ReadsEveryReplyType) {
  feed("+OK\r\n-ERR bad\r\n:-5\r\n$4\r\na\r\nb\r\n$-1\r\n*-1\r\n*2\r\n*1\r\n:1\r\n$0\r\n\r\n");
  EXPECT_TRUE(connection_->read_reply().is_status("OK"));
  Reply error = connection_->read_reply();
  EXPECT_TRUE(error.is_error());
  EXPECT_EQ(error.string, "ERR bad");
  EXPECT_EQ(connection_->read_reply().integer, -5);
  EXPECT_EQ(connection_->read_reply().string, "a\r\nb");
  EXPECT_TRUE(connection_->read_reply().is_nil());
  EXPECT_TRUE(connection_->read_reply().is_nil());
  Reply nested = connection_->read_reply();
  ASSERT_EQ(nested.elements.size(), 2u);
  EXPECT_EQ(nested.elements[0].elements[0].integer, 1);
  EXPECT_EQ(nested.elements[1].string, "");
}

TEST_F(SocketPair, LargeBulkArrivingInPiecesReadsIntoTheDestination) {
  std::string payload(300000, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7);
  std::thread writer([&] {
    std::string all = "$" + std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
    for (std::size_t at = 0; at < all.size(); at += 7777) {
      feed(std::string_view(all).substr(at, 7777));
    }
  });
  std::string line;
  ASSERT_EQ(connection_->read_line(line), '$');
  std::string out(connection_->parse_integer(line), 'x');
  connection_->read_bulk_body(out.data(), out.size());
  writer.join();
  EXPECT_EQ(out, payload);
}

TEST_F(SocketPair, MalformedAndClosedStreams) {
  feed("?what\r\n");
  EXPECT_THROW(connection_->read_reply(), ProtocolError);
  feed(":12x\r\n");
  EXPECT_THROW(connection_->read_reply(), ProtocolError);
  ::shutdown(peer_, SHUT_WR);
  EXPECT_THROW(connection_->read_reply(), ConnectionError);
}

TEST_F(SocketPair, TimeoutWhenNothingArrives) {
  connection_->set_io_timeout(std::chrono::milliseconds(50));
  EXPECT_THROW(connection_->read_reply(), TimeoutError);
}

TEST(Layout, FortranToCMatchesIndexFormula) {
  const std::vector<std::int64_t> shape{3, 4, 5, 2};
  const std::size_t n = 3 * 4 * 5 * 2;
  std::vector<std::int32_t> fortran(n), c(n), back(n);
  for (std::size_t i = 0; i < n; ++i) fortran[i] = static_cast<std::int32_t>(i);
  fortran_to_c(reinterpret_cast<const std::byte*>(fortran.data()),
               reinterpret_cast<std::byte*>(c.data()), 4, shape);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 5; ++k) {
        for (int l = 0; l < 2; ++l) {
          std::size_t c_pos = ((i * 4 + j) * 5 + k) * 2 + l;
          std::size_t f_pos = i + 3 * (j + 4 * (k + 5 * l));
          ASSERT_EQ(c[c_pos], fortran[f_pos]);
        }
      }
    }
  }
  c_to_fortran(reinterpret_cast<const std::byte*>(c.data()),
               reinterpret_cast<std::byte*>(back.data()), 4, shape);
  EXPECT_EQ(back, fortran);
}

TEST(Layout, ElementCountChecksShapes) {
  EXPECT_EQ(element_count(std::vector<std::int64_t>{}), 1u);
  EXPECT_EQ(element_count(std::vector<std::int64_t>{2, 3}), 6u);
  EXPECT_THROW(element_count(std::vector<std::int64_t>{2, 0}), InvalidArgumentError);
  EXPECT_THROW(element_count(std::vector<std::int64_t>{-1}), InvalidArgumentError);
  EXPECT_THROW(element_count(std::vector<std::int64_t>(33, 1)), InvalidArgumentError);
  EXPECT_THROW(element_count(std::vector<std::int64_t>{1ll << 40, 1ll << 40}),
               InvalidArgumentError);
}

TEST(MetaData, EncodingIsSmartRedis) {
  DataSet dataset("d");
  dataset.add_meta_scalar("i", std::int32_t{1});
  dataset.add_meta_string("s", "ab");
  auto fields = detail::DataSetAccess::encoded_fields(dataset);
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_EQ(fields[0].second, std::string("\x03\x01\x00\x00\x00", 5));
  EXPECT_EQ(fields[1].second, std::string("\x07\x02\x00\x00\x00\x00\x00\x00\x00"
                                          "ab",
                                          11));
}

TEST(MetaData, MalformedStoredFieldsAreRejected) {
  DataSet dataset("d");
  EXPECT_THROW(detail::DataSetAccess::set_encoded_field(dataset, "x", "\x09"), ProtocolError);
  EXPECT_THROW(
      detail::DataSetAccess::set_encoded_field(dataset, "x", std::string("\x01\x00\x00", 3)),
      ProtocolError);
  EXPECT_THROW(detail::DataSetAccess::set_encoded_field(dataset, "x", std::string("\x07\x05\0", 3)),
               ProtocolError);
  detail::DataSetAccess::set_encoded_field(dataset, "empty", "");
  EXPECT_TRUE(dataset.get_meta_strings("empty").empty());
}

}  // namespace
}  // namespace slipstream::client

// RedisAI tensor commands against a real server: every dtype, reply shapes, errors that leave
// the key untouched, tensors as ordinary keys, large payloads over TCP and the Unix socket.
#include <gtest/gtest.h>

#include <cstring>

#include "support/raw_client.hpp"
#include "support/server_process.hpp"

namespace slipstream::testing {
namespace {

class TensorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServerProcess(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(c_.call({"FLUSHDB"}).is_ok()); }
  static ServerProcess* server_;
  RawClient c_ = RawClient::tcp(server_->port());
};
ServerProcess* TensorTest::server_ = nullptr;

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

struct DTypeCase {
  const char* name;
  std::size_t size;
};

TEST_F(TensorTest, BlobRoundTripForEveryDType) {
  const DTypeCase cases[] = {{"FLOAT", 4}, {"DOUBLE", 8}, {"INT8", 1},   {"INT16", 2}, {"INT32", 4},
                             {"INT64", 8}, {"UINT8", 1},  {"UINT16", 2}, {"BOOL", 1},
                             {"UINT32", 4}, {"UINT64", 8}};
  for (const auto& dt : cases) {
    std::string blob(2 * 3 * dt.size, '\0');
    for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>(i % 2);  // BOOL-safe
    std::string key = std::string("t:") + dt.name;
    ASSERT_TRUE(c_.call({"AI.TENSORSET", key, dt.name, "2", "3", "BLOB", blob}).is_ok()) << dt.name;
    RespReply r = c_.call({"AI.TENSORGET", key, "META", "BLOB"});
    EXPECT_EQ(r.str(), std::string("[$dtype, $") + dt.name + ", $shape, [:2, :3], $blob, $" + blob +
                           "]")
        << dt.name;
    EXPECT_EQ(c_.call({"AI.TENSORGET", key, "BLOB"}).text, blob);
    EXPECT_EQ(c_.call({"AI.TENSORGET", key, "META"}).str(),
              std::string("[$dtype, $") + dt.name + ", $shape, [:2, :3]]");
  }
}

TEST_F(TensorTest, DefaultFormatIsMetaBlob) {
  std::vector<float> values = {1.5f, -2.0f};
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "d", "FLOAT", "2", "BLOB", bytes_of(values)}).is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "d"}).str(),
            "[$dtype, $FLOAT, $shape, [:2], $blob, $" + bytes_of(values) + "]");
}

TEST_F(TensorTest, ValuesInAndOut) {
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "v", "FLOAT", "2", "2", "VALUES", "1", "2.5", "-3", "4"})
                  .is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "v", "VALUES"}).str(), "[$1, $2.5, $-3, $4]");
  EXPECT_EQ(c_.call({"AI.TENSORGET", "v", "META", "VALUES"}).str(),
            "[$dtype, $FLOAT, $shape, [:2, :2], $values, [$1, $2.5, $-3, $4]]");
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "i", "INT8", "3", "VALUES", "-128", "0", "127"}).is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "i", "VALUES"}).str(), "[:-128, :0, :127]");
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "u", "UINT16", "1", "VALUES", "65535"}).is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "u", "VALUES"}).str(), "[:65535]");
  // Slipstream's unsigned 32- and 64-bit types: the whole range, above 2^63 - 1 as text.
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "u4", "UINT32", "2", "VALUES", "0", "4294967295"}).is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "u4", "VALUES"}).str(), "[:0, :4294967295]");
  EXPECT_TRUE(c_.call({"AI.TENSORSET", "u4", "UINT32", "1", "VALUES", "4294967296"}).is_error());
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "u8", "UINT64", "2", "VALUES", "7", "18446744073709551615"})
                  .is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "u8", "VALUES"}).str(), "[:7, $18446744073709551615]");
  EXPECT_TRUE(c_.call({"AI.TENSORSET", "u8", "UINT64", "1", "VALUES", "-1"}).is_error());
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "z", "DOUBLE", "3"}).is_ok());  // zero-filled
  EXPECT_EQ(c_.call({"AI.TENSORGET", "z", "VALUES"}).str(), "[$0, $0, $0]");
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "s", "INT32", "VALUES", "7"}).is_ok());  // a scalar
  EXPECT_EQ(c_.call({"AI.TENSORGET", "s", "META"}).str(), "[$dtype, $INT32, $shape, []]");
}

TEST_F(TensorTest, BadInputIsAClearErrorAndLeavesTheKeyAsItWas) {
  std::vector<std::int32_t> good = {1, 2, 3, 4};
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "keep", "INT32", "4", "BLOB", bytes_of(good)}).is_ok());
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"AI.TENSORSET", "keep", "FLOAT128", "4", "BLOB", "x"}, "-ERR invalid data type"},
      {{"AI.TENSORSET", "keep", "INT32", "0", "BLOB", ""},
       "-ERR invalid or negative value found in tensor shape"},
      {{"AI.TENSORSET", "keep", "INT32", "-4", "BLOB", "x"},
       "-ERR invalid or negative value found in tensor shape"},
      {{"AI.TENSORSET", "keep", "INT32", "four", "BLOB", "x"},
       "-ERR invalid or negative value found in tensor shape"},
      {{"AI.TENSORSET", "keep", "INT32", "4", "BLOB", std::string(15, 'x')},
       "-ERR data length does not match tensor shape and type"},
      {{"AI.TENSORSET", "keep", "INT32", "4", "BLOB"},
       "-ERR a single binary string should come after the BLOB argument in 'AI.TENSORSET' "
       "command"},
      {{"AI.TENSORSET", "keep", "INT32", "4", "VALUES", "1", "2"},
       "-ERR wrong number of values was given in 'AI.TENSORSET' command"},
      {{"AI.TENSORSET", "keep", "INT8", "1", "VALUES", "200"}, "-ERR invalid value"},
      {{"AI.TENSORSET", "keep", "FLOAT", "1", "VALUES", "abc"}, "-ERR invalid value"},
      {{"AI.TENSORSET", "keep", "BOOL", "1", "VALUES", "2"}, "-ERR invalid value"},
  };
  for (const auto& [args, expected] : cases) {
    EXPECT_EQ(c_.call(args).str(), expected) << args[2] << " " << args[3];
    EXPECT_EQ(c_.call({"AI.TENSORGET", "keep", "BLOB"}).text, bytes_of(good));
  }
  std::vector<std::string> too_many = {"AI.TENSORSET", "keep", "UINT8"};
  for (int i = 0; i < 40; ++i) too_many.push_back("1");
  RespReply r = c_.call(too_many);
  EXPECT_TRUE(r.is_error());
  EXPECT_NE(r.text.find("too many dimensions"), std::string::npos) << r.text;
  RespReply huge = c_.call({"AI.TENSORSET", "keep", "DOUBLE", "100000", "100000", "100000"});
  EXPECT_NE(huge.text.find("too large"), std::string::npos) << huge.str();
  EXPECT_EQ(c_.call({"AI.TENSORGET", "keep", "BLOB"}).text, bytes_of(good));
}

TEST_F(TensorTest, TensorGetErrors) {
  EXPECT_EQ(c_.call({"AI.TENSORGET", "missing", "BLOB"}).str(),
            "-ERR tensor key is empty or in a different shard");
  ASSERT_TRUE(c_.call({"SET", "str", "x"}).is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "str"}).str(),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(c_.call({"AI.TENSORSET", "str", "FLOAT", "1"}).str(),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(c_.call({"GET", "str"}).str(), "$x");
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "t", "FLOAT", "1"}).is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "t", "JSON"}).str(), "-ERR unsupported data format");
  EXPECT_EQ(c_.call({"AI.TENSORGET", "t", "BLOB", "VALUES"}).str(),
            "-ERR both BLOB and VALUES specified");
  EXPECT_EQ(c_.call({"GET", "t"}).str(),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
}

TEST_F(TensorTest, TensorsAreOrdinaryKeys) {
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "a", "FLOAT", "2", "VALUES", "1", "2"}).is_ok());
  EXPECT_EQ(c_.call({"TYPE", "a"}).str(), "+AI_TENSOR");
  EXPECT_EQ(c_.call({"EXISTS", "a", "a", "nope"}).str(), ":2");
  EXPECT_EQ(c_.call({"COPY", "a", "b"}).str(), ":1");
  EXPECT_TRUE(c_.call({"RENAME", "a", "c"}).is_ok());
  EXPECT_EQ(c_.call({"AI.TENSORGET", "c", "VALUES"}).str(), "[$1, $2]");
  EXPECT_EQ(c_.call({"AI.TENSORGET", "b", "VALUES"}).str(), "[$1, $2]");
  RespReply scan = c_.call({"SCAN", "0", "COUNT", "100", "TYPE", "AI_TENSOR"});
  EXPECT_EQ(scan.elements[1].elements.size(), 2u);
  EXPECT_EQ(c_.call({"DEL", "b"}).str(), ":1");
  EXPECT_EQ(c_.call({"UNLINK", "c"}).str(), ":1");
  EXPECT_EQ(c_.call({"DBSIZE"}).str(), ":0");
  ASSERT_TRUE(c_.call({"AI.TENSORSET", "f", "FLOAT", "1"}).is_ok());
  ASSERT_TRUE(c_.call({"FLUSHDB"}).is_ok());
  EXPECT_EQ(c_.call({"EXISTS", "f"}).str(), ":0");
}

TEST_F(TensorTest, LargeTensorsOverTcpAndUnixSocket) {
  std::string blob(16 << 20, '\0');
  for (std::size_t i = 0; i < blob.size(); i += 4096) blob[i] = static_cast<char>(i / 4096);
  RawClient local = RawClient::unix_socket(server_->unix_socket());
  for (RawClient* client : {&c_, &local}) {
    ASSERT_TRUE(
        client->call({"AI.TENSORSET", "big", "UINT8", std::to_string(blob.size()), "BLOB", blob})
            .is_ok());
    RespReply r = client->call({"AI.TENSORGET", "big", "META", "BLOB"});
    ASSERT_EQ(r.elements.size(), 6u);
    EXPECT_EQ(r.elements[3].elements[0].integer, static_cast<long long>(blob.size()));
    EXPECT_TRUE(r.elements[5].text == blob);
  }
}

}  // namespace
}  // namespace slipstream::testing

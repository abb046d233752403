// Tests for snapshot save/load (src/server/snapshot.hpp): round trips of every value type, the
// on-disk layout, and refusal of corrupt, truncated, foreign and newer files.
#include "server/persist/snapshot.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/crc64.hpp"

namespace slipstream::server {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

std::shared_ptr<Value> string_value(std::string_view bytes) {
  return std::make_shared<Value>(Buffer::copy_of(bytes));
}

std::shared_ptr<Value> tensor_value(DType dtype, std::vector<std::int64_t> shape,
                                    std::size_t bytes) {
  Buffer data = Buffer::uninitialized(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data.data()[i] = static_cast<char>(i * 31 + i / 251);
  return std::make_shared<Value>(Tensor{dtype, std::move(shape), std::move(data)});
}

std::shared_ptr<Value> hash_value(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Hash hash;
  for (const auto& [field, value] : pairs) hash.set(field, value);
  return std::make_shared<Value>(std::move(hash));
}

std::shared_ptr<Value> list_value(const std::vector<std::string>& items) {
  List list;
  for (const auto& item : items) list.push_back(item);
  return std::make_shared<Value>(std::move(list));
}

void expect_same_value(const Value& expected, const Value& actual, const std::string& key) {
  SCOPED_TRACE("key " + key);
  ASSERT_EQ(expected.type(), actual.type());
  switch (expected.type()) {
    case ValueType::kString:
      EXPECT_EQ(expected.string().view(), actual.string().view());
      break;
    case ValueType::kTensor:
      EXPECT_EQ(expected.tensor().dtype, actual.tensor().dtype);
      EXPECT_EQ(expected.tensor().shape, actual.tensor().shape);
      EXPECT_TRUE(expected.tensor().data.view() == actual.tensor().data.view());
      break;
    case ValueType::kHash:
      EXPECT_EQ(expected.hash().entries(), actual.hash().entries());
      break;
    case ValueType::kList:
      ASSERT_EQ(expected.list().size(), actual.list().size());
      for (std::size_t i = 0; i < expected.list().size(); ++i) {
        EXPECT_EQ(expected.list().at(i), actual.list().at(i)) << "item " << i;
      }
      break;
    case ValueType::kModel: {
      const ModelEntry& e = expected.model();
      const ModelEntry& a = actual.model();
      EXPECT_EQ(e.backend, a.backend);
      EXPECT_EQ(e.device, a.device);
      EXPECT_EQ(e.tag, a.tag);
      EXPECT_EQ(e.batching.batch_size, a.batching.batch_size);
      EXPECT_EQ(e.batching.min_batch_size, a.batching.min_batch_size);
      EXPECT_EQ(e.batching.min_batch_timeout, a.batching.min_batch_timeout);
      EXPECT_EQ(e.inputs, a.inputs);
      EXPECT_EQ(e.outputs, a.outputs);
      EXPECT_EQ(e.version, a.version);
      EXPECT_TRUE(e.blob.view() == a.blob.view());
      EXPECT_EQ(a.runtime, nullptr);  // compiled by the server after loading
      break;
    }
    case ValueType::kScript: {
      const ScriptEntry& e = expected.script();
      const ScriptEntry& a = actual.script();
      EXPECT_EQ(e.device, a.device);
      EXPECT_EQ(e.tag, a.tag);
      EXPECT_EQ(e.entry_points, a.entry_points);
      EXPECT_EQ(e.version, a.version);
      EXPECT_EQ(e.source, a.source);
      EXPECT_EQ(a.runtime, nullptr);
      break;
    }
  }
}

// Every key of `expected` is in `actual` with the same value, and nothing else is.
void expect_same_keyspace(const Keyspace& expected, const Keyspace& actual) {
  EXPECT_EQ(expected.size(), actual.size());
  expected.for_each([&](const std::string& key, const ValuePtr& value) {
    ValuePtr loaded = actual.get(key);
    ASSERT_NE(loaded, nullptr) << "missing key " << key;
    expect_same_value(*value, *loaded, key);
  });
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Recomputes the trailing CRC after a test edits a file, so that only the edit is under test.
void reseal(std::string& bytes) {
  const std::uint64_t crc = crc64(0, std::string_view(bytes).substr(0, bytes.size() - 8));
  for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<char>(crc >> (8 * i));
}

class SnapshotTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(testing::TempDir()) /
           ("slipstream_snapshot_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = dir_ / "dump.snap";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A keyspace with one key that must survive every refused load unchanged.
  static void add_sentinel(Keyspace& keyspace) { keyspace.set("sentinel", string_value("kept")); }
  static void expect_only_sentinel(const Keyspace& keyspace) {
    EXPECT_EQ(keyspace.size(), 1u);
    ValuePtr sentinel = keyspace.get("sentinel");
    ASSERT_NE(sentinel, nullptr);
    EXPECT_EQ(sentinel->string().view(), "kept");
  }
  // Loads `path_` into a keyspace holding only the sentinel, expects a refusal whose message
  // contains `expected`, and checks that the keyspace was left alone.
  void expect_refused(std::string_view expected) {
    Keyspace keyspace;
    add_sentinel(keyspace);
    try {
      load_snapshot(keyspace, path_);
      ADD_FAILURE() << "load_snapshot accepted a bad file; expected \"" << expected << "\"";
    } catch (const SnapshotError& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find(path_.string()), std::string::npos) << error.what();
    }
    expect_only_sentinel(keyspace);
  }
  // A snapshot with one small tensor at a known position, for byte-level edits.
  std::string small_tensor_snapshot() {
    Keyspace keyspace;
    keyspace.set("t", tensor_value(DType::kInt16, {2, 3}, 12));
    save_snapshot(keyspace, path_);
    return read_bytes(path_);
  }

  fs::path dir_;
  fs::path path_;
};

// Header (20) + tag (1) + key length (8) + key "t" (1): where the tensor payload starts.
constexpr std::size_t kSmallTensorDTypeOffset = 30;

TEST_F(SnapshotTest, RoundTripsEveryValueType) {
  Keyspace original;
  original.set("plain", string_value("hello"));
  original.set("binary\0key\r\n"s, string_value("nul\0and\r\ncrlf\0"s));
  original.set("", string_value(""));
  original.set("big tensor", tensor_value(DType::kFloat32, {1024, 1024}, 4u << 20));
  original.set("int64 tensor", tensor_value(DType::kInt64, {2, 3, 4}, std::size_t{2} * 3 * 4 * 8));
  original.set("bool tensor", tensor_value(DType::kBool, {5}, 5));
  original.set("scalar", tensor_value(DType::kFloat64, {}, 8));
  original.set("hash",
               hash_value({{"zeta", "1"}, {"alpha", "\0\r\n"s}, {"\0"s, ""}, {"mid", "x"}}));
  original.set("empty hash", hash_value({}));
  original.set("list", list_value({"first", "", "\0\r\n"s, "last"}));
  original.set("empty list", list_value({}));
  ModelEntry model;
  model.device = "GPU:1";
  model.tag = "eke\0v2"s;
  model.batching = {64, 8, std::chrono::milliseconds(5)};
  model.inputs = {"features"};
  model.outputs = {"eke", "aux"};
  model.version = 3;
  model.blob = Buffer::copy_of("PK\0archive bytes"s);
  original.set("model", std::make_shared<Value>(std::move(model)));
  ScriptEntry script;
  script.device = "CPU";
  script.entry_points = {"pre", "post"};
  script.version = 2;
  script.source = "def pre(tensors: List[Tensor], keys: List[str], args: List[str]):\n  ...";
  original.set("script", std::make_shared<Value>(std::move(script)));

  const SnapshotStats saved = save_snapshot(original, path_);
  EXPECT_EQ(saved.keys, original.size());
  EXPECT_EQ(saved.bytes, fs::file_size(path_));
  EXPECT_GT(saved.bytes, 4u << 20);

  Keyspace loaded;
  const SnapshotStats stats = load_snapshot(loaded, path_);
  EXPECT_EQ(stats.keys, original.size());
  EXPECT_EQ(stats.bytes, saved.bytes);
  expect_same_keyspace(original, loaded);
  // Hash field order is part of the value (HGETALL replies in insertion order).
  EXPECT_EQ(loaded.get("hash")->hash().entries().front().first, "zeta");
}

TEST_F(SnapshotTest, EmptyKeyspaceRoundTrips) {
  Keyspace empty;
  const SnapshotStats saved = save_snapshot(empty, path_);
  EXPECT_EQ(saved.keys, 0u);
  EXPECT_EQ(saved.bytes, 28u);  // header and checksum only
  Keyspace loaded;
  EXPECT_EQ(load_snapshot(loaded, path_).keys, 0u);
  EXPECT_EQ(loaded.size(), 0u);
}

// Pins the documented layout: every integer little-endian, fields in the documented order.
TEST_F(SnapshotTest, WritesTheDocumentedLayout) {
  Keyspace keyspace;
  keyspace.set("k", string_value("v"));
  save_snapshot(keyspace, path_);
  std::string expected = "SLIPSNAP"s + "\x01\0\0\0"s + "\x01\0\0\0\0\0\0\0"s  // version, count
                         + "\0"s                                              // tag: string
                         + "\x01\0\0\0\0\0\0\0k"s + "\x01\0\0\0\0\0\0\0v"s + std::string(8, '\0');
  reseal(expected);
  EXPECT_EQ(read_bytes(path_), expected);
  EXPECT_EQ(crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);  // the trailer is CRC-64/Jones
}

TEST_F(SnapshotTest, CorruptByteIsRefusedAndKeyspaceUntouched) {
  Keyspace original;
  original.set("a", string_value("value"));
  original.set("tensor", tensor_value(DType::kUInt8, {1 << 20}, 1 << 20));
  save_snapshot(original, path_);
  std::string bytes = read_bytes(path_);
  bytes[bytes.size() / 2] ^= 0x10;  // inside the tensor's data
  write_bytes(path_, bytes);
  expect_refused(" is corrupt: checksum mismatch (expected 0x");
}

TEST_F(SnapshotTest, TruncatedFileIsRefused) {
  Keyspace original;
  original.set("a", string_value("value"));
  original.set("tensor", tensor_value(DType::kFloat32, {256, 256}, std::size_t{256} * 256 * 4));
  save_snapshot(original, path_);
  const std::string bytes = read_bytes(path_);
  for (std::size_t size :
       {bytes.size() - 1, bytes.size() - 8, bytes.size() - 9, bytes.size() / 2, std::size_t{40},
        std::size_t{27}, std::size_t{12}, std::size_t{5}, std::size_t{0}}) {
    SCOPED_TRACE("truncated to " + std::to_string(size) + " bytes");
    write_bytes(path_, std::string_view(bytes).substr(0, size));
    expect_refused(" is truncated");
  }
}

TEST_F(SnapshotTest, ForeignFileIsRefused) {
  write_bytes(path_,
              "REDIS0011\xfa\x09redis-ver\x05"
              "7.2.4"s +
                  std::string(64, '\0'));
  expect_refused(" is not a slipstream snapshot");
  write_bytes(path_, "SLIPSNAX"s + std::string(64, '\0'));
  expect_refused(" is not a slipstream snapshot");
}

TEST_F(SnapshotTest, NewerFormatVersionIsRefusedByName) {
  Keyspace keyspace;
  keyspace.set("k", string_value("v"));
  save_snapshot(keyspace, path_);
  std::string bytes = read_bytes(path_);
  bytes[8] = 2;
  write_bytes(path_, bytes);
  expect_refused(" was written by format version 2; this server reads version 1");
}

TEST_F(SnapshotTest, UnknownDTypeIsRefusedEvenWithValidChecksum) {
  std::string bytes = small_tensor_snapshot();
  ASSERT_EQ(bytes[kSmallTensorDTypeOffset], static_cast<char>(DType::kInt16));
  bytes[kSmallTensorDTypeOffset] = 11;
  reseal(bytes);
  write_bytes(path_, bytes);
  expect_refused(" is corrupt: entry 0 (key \"t\" at byte 20): unknown tensor dtype code 11");
}

TEST_F(SnapshotTest, TensorSizeNotMatchingShapeIsRefused) {
  std::string bytes = small_tensor_snapshot();
  bytes[kSmallTensorDTypeOffset + 1 + 4] = 3;  // first dimension 2 -> 3: 18 bytes needed, 12 held
  reseal(bytes);
  write_bytes(path_, bytes);
  expect_refused("tensor has 12 data bytes but shape [3, 3] of INT16 needs 18");
}

TEST_F(SnapshotTest, StaleTempFileFromCrashedSaveDoesNotAffectLoading) {
  Keyspace good;
  good.set("generation", string_value("1"));
  save_snapshot(good, path_);

  // A save that died mid-write leaves a partial temporary file under the name a save in this
  // process would pick next; the snapshot itself was never replaced.
  Keyspace newer;
  newer.set("generation", string_value("2"));
  newer.set("tensor", tensor_value(DType::kFloat32, {4096}, std::size_t{4096} * 4));
  const fs::path elsewhere = dir_ / "other.snap";
  save_snapshot(newer, elsewhere);
  const std::string partial = read_bytes(elsewhere).substr(0, 1000);
  std::vector<fs::path> stale;
  for (int n = 0; n < 4; ++n) {
    stale.emplace_back(path_.string() + ".tmp-" + std::to_string(getpid()) + "-" +
                       std::to_string(n));
    write_bytes(stale.back(), partial);
  }

  Keyspace loaded;
  load_snapshot(loaded, path_);
  expect_same_keyspace(good, loaded);

  // The next save still succeeds and replaces the snapshot; others' temporary files are left.
  save_snapshot(newer, path_);
  Keyspace reloaded;
  load_snapshot(reloaded, path_);
  expect_same_keyspace(newer, reloaded);
  for (const fs::path& file : stale) EXPECT_EQ(read_bytes(file), partial);
}

TEST_F(SnapshotTest, SaveReplacesExistingSnapshotAndLeavesNoTempFiles) {
  Keyspace first;
  first.set("a", string_value("1"));
  first.set("b", list_value({"x"}));
  save_snapshot(first, path_);
  Keyspace second;
  second.set("c", hash_value({{"f", "v"}}));
  save_snapshot(second, path_);

  Keyspace loaded;
  EXPECT_EQ(load_snapshot(loaded, path_).keys, 1u);
  expect_same_keyspace(second, loaded);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    names.push_back(entry.path().filename());
  }
  EXPECT_EQ(names, std::vector<std::string>{"dump.snap"});
}

TEST_F(SnapshotTest, InvalidTensorIsNotSavedAndPreviousSnapshotSurvives) {
  Keyspace good;
  good.set("k", string_value("v"));
  save_snapshot(good, path_);
  const std::string before = read_bytes(path_);

  Keyspace bad;
  bad.set("broken", tensor_value(DType::kFloat32, {2, 2}, 15));
  EXPECT_THROW(save_snapshot(bad, path_), SnapshotError);
  EXPECT_EQ(read_bytes(path_), before);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SnapshotTest, ErrorsNameThePathAndTheOsError) {
  const fs::path missing_dir = dir_ / "no such dir" / "dump.snap";
  Keyspace keyspace;
  try {
    save_snapshot(keyspace, missing_dir);
    ADD_FAILURE() << "save into a missing directory succeeded";
  } catch (const SnapshotError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(missing_dir.string()), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
  try {
    load_snapshot(keyspace, missing_dir);
    ADD_FAILURE() << "load of a missing file succeeded";
  } catch (const SnapshotError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cannot open snapshot " + missing_dir.string()), std::string::npos)
        << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
}

TEST_F(SnapshotTest, SnapshotIsOwnerOnlyWhateverTheUmask) {
  // With umask 0 the file keeps the mode its temporary file was created with (rename keeps it):
  // the keyspace must never be readable by other users, even for a moment.
  const mode_t saved_umask = ::umask(0);
  Keyspace keyspace;
  keyspace.set("secret", string_value("v"));
  save_snapshot(keyspace, path_);
  ::umask(saved_umask);
  EXPECT_EQ(fs::status(path_).permissions(), fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(SnapshotTest, RemoveStaleTempFilesKeepsLiveWritersAndOtherFiles) {
  const pid_t gone = ::fork();  // a pid no process holds any more
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const std::string stem = path_.string() + ".tmp-";
  const fs::path dead = stem + std::to_string(gone) + "-7";
  const fs::path ours = stem + std::to_string(::getpid()) + "-0";   // a previous life's pid
  const fs::path live = stem + std::to_string(::getppid()) + "-0";  // a running process
  const std::vector<fs::path> kept = {
      live, stem + "12-x", stem + "abc-1", stem, dir_ / "other.snap.tmp-1-1", path_};
  for (const fs::path& file : {dead, ours}) write_bytes(file, "partial");
  for (const fs::path& file : kept) write_bytes(file, "keep");
  EXPECT_EQ(remove_stale_temp_files(path_), 2u);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(ours));
  for (const fs::path& file : kept) EXPECT_TRUE(fs::exists(file)) << file;
  EXPECT_EQ(remove_stale_temp_files(dir_ / "missing-dir" / "dump.snap"), 0u);
}

}  // namespace
}  // namespace slipstream::server

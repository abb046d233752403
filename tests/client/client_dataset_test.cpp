// Client datasets against a real server: round trips, the exact SmartRedis storage layout and
// metadata encoding (read back raw), datasets written by hand the way SmartRedis writes them,
// completeness and polling, copy/rename/delete, and ensemble key prefixes.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <thread>

#include "client_fixture.hpp"

namespace slipstream::testing {
namespace {

using namespace std::chrono_literals;

class DataSetTest : public ClientTest {};
SLIPSTREAM_INSTANTIATE_TRANSPORTS(DataSetTest);

template <typename T>
std::string raw(T value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}

std::string encoded_string(std::string_view s) {
  return raw<std::uint64_t>(s.size()) + std::string(s);
}

std::map<std::string, std::string> hash_of(Client& client, const std::string& key) {
  Reply reply = client.command({"HGETALL", key});
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out[reply.elements[i].string] = reply.elements[i + 1].string;
  }
  return out;
}

DataSet sample_dataset(const std::string& name) {
  DataSet dataset(name);
  const std::vector<float> temperature{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f};
  const std::vector<std::int64_t> shape{2, 3};
  dataset.add_tensor<float>("temperature", temperature, shape);
  const std::vector<std::int16_t> mask{1, 0, 1};
  const std::vector<std::int64_t> mask_shape{3};
  dataset.add_tensor<std::int16_t>("mask", mask, mask_shape);
  dataset.add_meta_scalar("time", 0.25);
  dataset.add_meta_scalar("step", std::int32_t{-7});
  dataset.add_meta_scalar("step", std::int32_t{8});
  dataset.add_meta_scalar("dt", 0.5f);
  dataset.add_meta_scalar("n64", std::int64_t{-1} << 40);
  dataset.add_meta_scalar("u32", std::uint32_t{4000000000u});
  dataset.add_meta_scalar("u64", std::uint64_t{1} << 63);
  dataset.add_meta_string("label", "ocean");
  dataset.add_meta_string("label", "");
  return dataset;
}

TEST_P(DataSetTest, RoundTrip) {
  client().put_dataset(sample_dataset(unique("ds")));
  EXPECT_TRUE(client().dataset_exists(unique("ds")));
  DataSet got = client().get_dataset(unique("ds"));
  EXPECT_EQ(got.name(), unique("ds"));
  EXPECT_EQ(got.get_tensor_names(), (std::vector<std::string>{"temperature", "mask"}));
  auto t = got.get_tensor("temperature").data<float>();
  EXPECT_EQ(std::vector<float>(t.begin(), t.end()),
            (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f}));
  std::vector<std::int16_t> mask(3);
  got.unpack_tensor<std::int16_t>("mask", mask);
  EXPECT_EQ(mask, (std::vector<std::int16_t>{1, 0, 1}));
  EXPECT_EQ(got.get_meta_scalars<double>("time"), std::vector<double>{0.25});
  EXPECT_EQ(got.get_meta_scalars<std::int32_t>("step"), (std::vector<std::int32_t>{-7, 8}));
  EXPECT_EQ(got.get_meta_scalars<float>("dt"), std::vector<float>{0.5f});
  EXPECT_EQ(got.get_meta_scalars<std::int64_t>("n64"), std::vector<std::int64_t>{-(1ll << 40)});
  EXPECT_EQ(got.get_meta_scalars<std::uint32_t>("u32"), std::vector<std::uint32_t>{4000000000u});
  EXPECT_EQ(got.get_meta_scalars<std::uint64_t>("u64"), std::vector<std::uint64_t>{1ull << 63});
  EXPECT_EQ(got.get_meta_strings("label"), (std::vector<std::string>{"ocean", ""}));
  auto fields = got.get_metadata_field_names();
  EXPECT_EQ(fields.size(), 7u);
  EXPECT_EQ(std::count(fields.begin(), fields.end(), ".tensor_names"), 0);
  EXPECT_EQ(got.get_metadata_field_type("u32"), MetaDataType::kUInt32);
  EXPECT_THROW(got.get_meta_scalars<double>("step"), InvalidArgumentError);
  EXPECT_THROW(got.get_meta_strings("nope"), KeyNotFoundError);
}

// The stored layout, byte for byte, as SmartRedis writes and reads it.
TEST_P(DataSetTest, StoredExactlyAsSmartRedis) {
  std::string name = unique("ds");
  client().put_dataset(sample_dataset(name));
  auto meta = hash_of(client(), "{" + name + "}.meta");
  EXPECT_EQ(meta.size(), 9u);  // 7 user fields, .tensor_names, .COMPLETE
  EXPECT_EQ(meta[".COMPLETE"], "1");
  EXPECT_EQ(meta[".tensor_names"], "\x07" + encoded_string("temperature") + encoded_string("mask"));
  EXPECT_EQ(meta["time"], "\x01" + raw(0.25));
  EXPECT_EQ(meta["dt"], "\x02" + raw(0.5f));
  EXPECT_EQ(meta["step"], "\x03" + raw(std::int32_t{-7}) + raw(std::int32_t{8}));
  EXPECT_EQ(meta["n64"], "\x04" + raw(std::int64_t{-1} << 40));
  EXPECT_EQ(meta["u32"], "\x05" + raw(std::uint32_t{4000000000u}));
  EXPECT_EQ(meta["u64"], "\x06" + raw(std::uint64_t{1} << 63));
  EXPECT_EQ(meta["label"], "\x07" + encoded_string("ocean") + encoded_string(""));

  Reply tensor = client().command({"AI.TENSORGET", "{" + name + "}.temperature", "META", "BLOB"});
  ASSERT_EQ(tensor.elements.size(), 6u);
  EXPECT_EQ(tensor.elements[1].string, "FLOAT");
  EXPECT_EQ(tensor.elements[3].elements.size(), 2u);
  EXPECT_EQ(client().command({"TYPE", "{" + name + "}.mask"}).string, "AI_TENSOR");
}

// A dataset written with raw commands the way SmartRedis's put_dataset writes it.
TEST_P(DataSetTest, ReadsADataSetWrittenLikeSmartRedis) {
  std::string key = "{" + unique("sr") + "}";
  std::string names = "\x07" + encoded_string("u");
  std::string time = "\x01" + raw(3.0) + raw(4.0);
  std::string blob = raw(std::uint8_t{9}) + raw(std::uint8_t{8});
  auto replies = client().commands({{"DEL", key + ".meta"},
                                    {"HMSET", key + ".meta", ".tensor_names", names, "time", time},
                                    {"AI.TENSORSET", key + ".u", "UINT8", "2", "BLOB", blob},
                                    {"HSET", key + ".meta", ".COMPLETE", "1"}});
  for (const auto& r : replies) ASSERT_FALSE(r.is_error()) << r.string;
  DataSet got = client().get_dataset(unique("sr"));
  EXPECT_EQ(got.get_meta_scalars<double>("time"), (std::vector<double>{3.0, 4.0}));
  auto u = got.get_tensor("u").data<std::uint8_t>();
  EXPECT_EQ(std::vector<std::uint8_t>(u.begin(), u.end()), (std::vector<std::uint8_t>{9, 8}));
}

TEST_P(DataSetTest, MissingIncompleteAndEmpty) {
  EXPECT_THROW(client().get_dataset(unique("none")), KeyNotFoundError);
  EXPECT_THROW(client().delete_dataset(unique("none")), KeyNotFoundError);
  EXPECT_FALSE(client().dataset_exists(unique("none")));
  EXPECT_THROW(client().put_dataset(DataSet(unique("empty"))), InvalidArgumentError);
  EXPECT_THROW(DataSet(""), InvalidArgumentError);
  // Metadata written but no .COMPLETE yet: not "existing".
  client().command({"HSET", "{" + unique("half") + "}.meta", "x", "\x07"});
  EXPECT_FALSE(client().dataset_exists(unique("half")));
  EXPECT_FALSE(client().poll_dataset(unique("half"), 20, 3));
}

TEST_P(DataSetTest, MetadataOnlyDataSet) {
  DataSet dataset(unique("meta"));
  dataset.add_meta_string("who", "ranks");
  client().put_dataset(dataset);
  DataSet got = client().get_dataset(unique("meta"));
  EXPECT_TRUE(got.get_tensor_names().empty());
  EXPECT_EQ(got.get_meta_strings("who"), std::vector<std::string>{"ranks"});
}

TEST_P(DataSetTest, PollWakesWhenPut) {
  std::thread writer([&] {
    Client other(shared_server().unix_address());
    std::this_thread::sleep_for(100ms);
    other.put_dataset(sample_dataset(unique("late")));
  });
  EXPECT_TRUE(client().poll_dataset(unique("late"), 500, 10));
  writer.join();
  EXPECT_FALSE(client().poll_dataset(unique("late"), 10, 0));
}

TEST_P(DataSetTest, CopyRenameDelete) {
  client().put_dataset(sample_dataset(unique("a")));
  client().copy_dataset(unique("a"), unique("b"));
  client().rename_dataset(unique("a"), unique("c"));
  EXPECT_FALSE(client().dataset_exists(unique("a")));
  EXPECT_FALSE(client().key_exists("{" + unique("a") + "}.temperature"));
  for (const char* n : {"b", "c"}) {
    DataSet got = client().get_dataset(unique(n));
    EXPECT_EQ(got.get_meta_strings("label"), (std::vector<std::string>{"ocean", ""}));
    EXPECT_EQ(got.get_tensor("mask").size(), 3u);
  }
  client().delete_dataset(unique("b"));
  EXPECT_FALSE(client().dataset_exists(unique("b")));
  EXPECT_FALSE(client().key_exists("{" + unique("b") + "}.mask"));
  EXPECT_THROW(client().copy_dataset(unique("b"), unique("d")), KeyNotFoundError);
}

TEST(DataSetLocal, FieldRulesAndFortranTensors) {
  DataSet dataset("local");
  dataset.add_meta_scalar("x", 1.0);
  EXPECT_THROW(dataset.add_meta_scalar("x", 1.0f), InvalidArgumentError);
  EXPECT_THROW(dataset.add_meta_string("x", "s"), InvalidArgumentError);
  EXPECT_THROW(dataset.add_meta_string(".COMPLETE", "s"), InvalidArgumentError);
  const std::vector<std::int32_t> fortran{1, 2, 3, 4, 5, 6};  // a(2,3)
  const std::vector<std::int64_t> shape{2, 3};
  dataset.add_tensor<std::int32_t>("a", fortran, shape, MemoryOrder::kFortran);
  EXPECT_THROW(dataset.add_tensor<std::int32_t>("a", fortran, shape), InvalidArgumentError);
  auto c = dataset.get_tensor("a").data<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(c.begin(), c.end()),
            (std::vector<std::int32_t>{1, 3, 5, 2, 4, 6}));
  std::vector<std::int32_t> back(6);
  dataset.unpack_tensor<std::int32_t>("a", back, MemoryOrder::kFortran);
  EXPECT_EQ(back, fortran);
  dataset.clear_field("x");
  EXPECT_FALSE(dataset.has_field("x"));
  EXPECT_THROW(dataset.get_tensor("b"), KeyNotFoundError);
}

TEST(DataSetPrefixes, EnsemblePrefixesAsSmartRedis) {
  ClientOptions options;
  options.address = shared_server().tcp_address();
  options.key_prefix_out = "ens0";
  options.key_prefixes_in = "ens1,ens0";
  Client client(options);
  Client raw_client(shared_server().tcp_address());
  std::string t = unique("t");
  const std::vector<float> one{1}, two{2};
  const std::vector<std::int64_t> shape{1};

  client.put_tensor<float>(t, one, shape);
  EXPECT_TRUE(raw_client.key_exists("ens0." + t));
  raw_client.put_tensor<float>("ens1." + t, two, shape);
  EXPECT_EQ(client.get_tensor(t).data<float>()[0], 2.0f);  // reads from the first SSKEYIN entry
  client.set_data_source("ens0");
  EXPECT_EQ(client.get_tensor(t).data<float>()[0], 1.0f);
  EXPECT_THROW(client.set_data_source("ens9"), InvalidArgumentError);

  client.use_tensor_ensemble_prefix(false);
  client.put_tensor<float>(t, two, shape);
  EXPECT_TRUE(raw_client.key_exists(t));
  client.use_tensor_ensemble_prefix(true);

  DataSet dataset(unique("ds"));
  dataset.add_meta_scalar("x", 1.0);
  client.put_dataset(dataset);
  EXPECT_TRUE(raw_client.key_exists("ens0.{" + unique("ds") + "}.meta"));
  EXPECT_TRUE(client.dataset_exists(unique("ds")));
  client.use_dataset_ensemble_prefix(false);
  EXPECT_FALSE(client.dataset_exists(unique("ds")));
  client.use_dataset_ensemble_prefix(true);

  client.append_to_list(unique("list"), dataset);
  Reply entries = raw_client.command({"LRANGE", "ens0." + unique("list"), "0", "-1"});
  ASSERT_EQ(entries.elements.size(), 1u);
  EXPECT_EQ(entries.elements[0].string, "ens0.{" + unique("ds") + "}");
  EXPECT_EQ(client.get_list_length(unique("list")), 1);
  auto datasets = client.get_datasets_from_list(unique("list"));
  ASSERT_EQ(datasets.size(), 1u);
  EXPECT_EQ(datasets[0].name(), unique("ds"));

  EXPECT_FALSE(client.model_ensemble_prefix_enabled());
  client.use_model_ensemble_prefix(true);
  EXPECT_TRUE(client.model_ensemble_prefix_enabled());
}

}  // namespace
}  // namespace slipstream::testing

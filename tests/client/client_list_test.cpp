// Client aggregation lists against a real server: SmartRedis's list layout, lengths, ranges,
// copy/rename/delete, and waiting for a length (server-side SS.WAITLEN).
#include <gtest/gtest.h>

#include <thread>

#include "client_fixture.hpp"

namespace slipstream::testing {
namespace {

using namespace std::chrono_literals;

class ListTest : public ClientTest {};
SLIPSTREAM_INSTANTIATE_TRANSPORTS(ListTest);

DataSet numbered_dataset(const std::string& name, int n) {
  DataSet dataset(name);
  const std::vector<std::int32_t> values{n, n + 1};
  const std::vector<std::int64_t> shape{2};
  dataset.add_tensor<std::int32_t>("v", values, shape);
  dataset.add_meta_scalar("n", std::int64_t{n});
  return dataset;
}

void put_and_append(Client& client, const std::string& list, const std::string& name, int n) {
  DataSet dataset = numbered_dataset(name, n);
  client.put_dataset(dataset);
  client.append_to_list(list, dataset);
}

TEST_P(ListTest, AppendLengthAndRange) {
  std::string list = unique("list");
  EXPECT_EQ(client().get_list_length(list), 0);
  EXPECT_TRUE(client().get_datasets_from_list(list).empty());
  for (int i = 0; i < 5; ++i) put_and_append(client(), list, unique(numbered("d", i)), i);
  EXPECT_EQ(client().get_list_length(list), 5);

  Reply entries = client().command({"LRANGE", list, "0", "-1"});
  ASSERT_EQ(entries.elements.size(), 5u);
  EXPECT_EQ(entries.elements[2].string, "{" + unique("d2") + "}");  // dataset key, no .meta

  auto all = client().get_datasets_from_list(list);
  ASSERT_EQ(all.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(all[i].name(), unique(numbered("d", i)));
    EXPECT_EQ(all[i].get_meta_scalars<std::int64_t>("n"), std::vector<std::int64_t>{i});
    EXPECT_EQ(all[i].get_tensor("v").data<std::int32_t>()[1], i + 1);
  }
  auto middle = client().get_dataset_list_range(list, 1, 2);
  ASSERT_EQ(middle.size(), 2u);
  EXPECT_EQ(middle[0].name(), unique("d1"));
  auto tail = client().get_dataset_list_range(list, -2, -1);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[1].name(), unique("d4"));
}

TEST_P(ListTest, CopyRenameDelete) {
  std::string list = unique("list");
  put_and_append(client(), list, unique("d0"), 0);
  put_and_append(client(), list, unique("d1"), 1);
  client().copy_list(list, unique("copy"));
  EXPECT_EQ(client().get_list_length(unique("copy")), 2);
  client().rename_list(unique("copy"), unique("renamed"));
  EXPECT_EQ(client().get_list_length(unique("copy")), 0);
  EXPECT_EQ(client().get_datasets_from_list(unique("renamed"))[1].name(), unique("d1"));
  client().delete_list(list);
  EXPECT_EQ(client().get_list_length(list), 0);
  EXPECT_TRUE(client().dataset_exists(unique("d0")));  // the datasets stay
  EXPECT_THROW(client().copy_list(list, unique("other")), KeyNotFoundError);
}

TEST_P(ListTest, MissingDataSetInListIsKeyNotFound) {
  std::string list = unique("list");
  client().append_to_list(list, numbered_dataset(unique("never_put"), 0));
  EXPECT_THROW(client().get_datasets_from_list(list), KeyNotFoundError);
  EXPECT_EQ(client().get_list_length(list), 1);
}

TEST_P(ListTest, PollLength) {
  std::string list = unique("list");
  EXPECT_THROW(client().poll_list_length(list, -1, 10, 1), InvalidArgumentError);
  EXPECT_TRUE(client().poll_list_length(list, 0, 10, 1));
  EXPECT_TRUE(client().poll_list_length_lte(list, 0, 10, 1));
  EXPECT_FALSE(client().poll_list_length_gte(list, 1, 20, 2));

  // Timed from before the writer starts, so a slow start of this thread after it cannot shorten
  // the wait seen.
  auto start = std::chrono::steady_clock::now();
  std::thread writer([&] {
    Client other(shared_server().tcp_address());
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(50ms);
      put_and_append(other, list, unique(numbered("d", i)), i);
    }
  });
  EXPECT_TRUE(client().poll_list_length_gte(list, 3, 1000, 10));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  writer.join();
  EXPECT_TRUE(client().poll_list_length(list, 3, 10, 1));
  EXPECT_FALSE(client().poll_list_length(list, 2, 10, 3));
  EXPECT_FALSE(client().poll_list_length_lte(list, 2, 10, 3));
  EXPECT_TRUE(client().poll_list_length_lte(list, 3, 10, 1));
}

}  // namespace
}  // namespace slipstream::testing

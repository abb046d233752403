// Client aggregation lists as SmartRedis stores them: a Redis list of dataset keys (`{name}`, with
// the write prefix), read back with LRANGE, HGETALL of each `.meta` and AI.TENSORGET.
#include <thread>

#include "client/client_impl.hpp"
#include "client/dataset_access.hpp"
#include "client/dataset_io.hpp"
#include "slipstream/client.hpp"

namespace slipstream {

using client::Request;

using std::chrono::milliseconds;

namespace {

// The dataset name inside a list entry: between its first '{' and last '}'.
std::string dataset_name_of(const std::string& entry, std::string_view list) {
  auto open = entry.find('{');
  auto close = entry.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) {
    throw ProtocolError("entry '" + entry + "' of list '" + std::string(list) +
                        "' is not a dataset key of the form [prefix.]{name}");
  }
  return entry.substr(open + 1, close - open - 1);
}

void check_length(std::int64_t length) {
  if (length < 0) {
    throw InvalidArgumentError("list length must not be negative (got " + std::to_string(length) +
                               ")");
  }
}

}  // namespace

void Client::append_to_list(std::string_view list_name, const DataSet& dataset) {
  std::string key = impl_->list_key(list_name, false);
  Request request;
  request.command({"RPUSH", key, impl_->dataset_key(dataset.name(), false)});
  impl_->call(key, request, "append to list '" + key + "'");
}

void Client::delete_list(std::string_view list_name) {
  std::string key = impl_->list_key(list_name, true);
  Request request;
  request.command({"DEL", key});
  impl_->call(key, request, "delete list '" + key + "'");
}

void Client::copy_list(std::string_view source, std::string_view destination) {
  std::string from = impl_->list_key(source, true);
  std::string to = impl_->list_key(destination, false);
  if (from == to) return;
  Request range;
  range.command({"LRANGE", from, "0", "-1"});
  Reply entries = impl_->call(from, range, "copy list '" + from + "'");
  if (!entries.is_array()) throw ProtocolError("LRANGE '" + from + "' did not return an array");
  if (entries.elements.empty()) {
    throw KeyNotFoundError("copy list '" + from + "': the list is empty or does not exist");
  }
  Request request;
  request.command({"DEL", to});
  request.command(2 + entries.elements.size());
  request.arg("RPUSH");
  request.arg(to);
  for (const auto& e : entries.elements) request.arg(e.string);
  impl_->exchange(to, request, [&](client::Connection& c) {
    Impl::read_each(c, 2, [&](client::Connection& conn, std::size_t) {
      Reply reply = conn.read_reply();
      if (reply.is_error()) client::throw_server_error(reply.string, "copy list to '" + to + "'");
    });
  });
}

void Client::rename_list(std::string_view old_name, std::string_view new_name) {
  copy_list(old_name, new_name);
  if (impl_->list_key(old_name, true) != impl_->list_key(new_name, false)) delete_list(old_name);
}

std::int64_t Client::get_list_length(std::string_view list_name) {
  return impl_->list_length(impl_->list_key(list_name, true));
}

bool Client::poll_list_length_gte(std::string_view list_name, std::int64_t length, int poll_ms,
                                  int tries) {
  check_length(length);
  if (tries <= 0) return false;
  milliseconds budget(static_cast<std::int64_t>(std::max(poll_ms, 0)) * tries);
  return impl_->wait_for_length(impl_->list_key(list_name, true), length, budget);
}

// Equality: wait server-side for the length to reach `length`, then poll (the list may have grown
// past it and must shrink back, which SS.WAITLEN cannot wait for).
bool Client::poll_list_length(std::string_view list_name, std::int64_t length, int poll_ms,
                              int tries) {
  check_length(length);
  if (tries <= 0) return false;
  using Clock = std::chrono::steady_clock;
  std::string key = impl_->list_key(list_name, true);
  milliseconds budget(static_cast<std::int64_t>(std::max(poll_ms, 0)) * tries);
  auto deadline = Clock::now() + budget;
  if (!impl_->wait_for_length(key, length, budget)) return false;
  for (;;) {
    if (impl_->list_length(key) == length) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(milliseconds(std::max(poll_ms, 1)), deadline - Clock::now()));
  }
}

bool Client::poll_list_length_lte(std::string_view list_name, std::int64_t length, int poll_ms,
                                  int tries) {
  check_length(length);
  std::string key = impl_->list_key(list_name, true);
  for (int i = 0; i < tries; ++i) {
    if (impl_->list_length(key) <= length) return true;
    if (i + 1 < tries) std::this_thread::sleep_for(milliseconds(std::max(poll_ms, 0)));
  }
  return false;
}

std::vector<DataSet> Client::get_datasets_from_list(std::string_view list_name) {
  return get_dataset_list_range(list_name, 0, -1);
}

// Three round trips whatever the list length: LRANGE, every `.meta` hash, every tensor.
std::vector<DataSet> Client::get_dataset_list_range(std::string_view list_name, std::int64_t start,
                                                    std::int64_t end) {
  std::string key = impl_->list_key(list_name, true);
  Request range;
  range.command(4);
  range.arg("LRANGE");
  range.arg(key);
  range.arg(start);
  range.arg(end);
  Reply entries = impl_->call(key, range, "LRANGE '" + key + "'");
  if (!entries.is_array()) throw ProtocolError("LRANGE '" + key + "' did not return an array");
  std::size_t count = entries.elements.size();
  if (count == 0) return {};

  // Each dataset's keys share its {name} hash tag; in cluster mode the datasets of one list may
  // live on different shards, and each shard gets its share of every pipeline.
  auto entry_of = [&](std::size_t i) { return Route(entries.elements[i].string); };
  std::vector<Reply> metas(count);
  impl_->exchange_batch(
      count, entry_of,
      [&](Request& request, std::size_t i) {
        request.command({"HGETALL", entries.elements[i].string + ".meta"});
      },
      [&](client::Connection& c, std::size_t i) { metas[i] = c.read_reply(); });

  std::vector<DataSet> datasets;
  std::vector<std::vector<std::string>> names(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& entry = entries.elements[i].string;
    if (metas[i].is_error()) client::throw_server_error(metas[i].string, "HGETALL " + entry);
    if (metas[i].elements.empty()) {
      throw KeyNotFoundError("list '" + key + "' refers to dataset '" + entry +
                             "', which does not exist");
    }
    std::string name = dataset_name_of(entry, key);
    datasets.push_back(client::dataset_from_meta(name, metas[i]));
    names[i] = client::tensor_names_of(metas[i], name);
  }

  std::vector<std::pair<std::size_t, std::string>> slots;  // (dataset, tensor) per reply
  for (std::size_t i = 0; i < count; ++i) {
    for (const auto& t : names[i]) slots.emplace_back(i, t);
  }
  if (slots.empty()) return datasets;
  std::vector<Tensor> tensors(slots.size());
  auto tensor_key = [&](std::size_t j) {
    return entries.elements[slots[j].first].string + "." + slots[j].second;
  };
  impl_->exchange_batch(
      slots.size(), [&](std::size_t j) { return entry_of(slots[j].first); },
      [&](Request& request, std::size_t j) { Impl::add_tensor_get(request, tensor_key(j)); },
      [&](client::Connection& conn, std::size_t j) {
        tensors[j] = Impl::read_tensor(conn, tensor_key(j));
      });
  for (std::size_t j = 0; j < slots.size(); ++j) {
    detail::DataSetAccess::attach_tensor(datasets[slots[j].first], slots[j].second,
                                         std::move(tensors[j]));
  }
  return datasets;
}

}  // namespace slipstream

// Client dataset calls, storing datasets exactly as SmartRedis does: hash `{name}.meta` holding the
// encoded metadata fields, `.tensor_names` and `.COMPLETE`, and tensors at `{name}.<tensor>`.
#include <thread>

#include "client/client_impl.hpp"
#include "client/dataset_access.hpp"
#include "client/dataset_io.hpp"
#include "slipstream/client.hpp"

namespace slipstream {

using client::Request;

using detail::DataSetAccess;
using std::chrono::milliseconds;

namespace client {

std::vector<std::string> tensor_names_of(const Reply& meta, std::string_view dataset) {
  for (std::size_t i = 0; i + 1 < meta.elements.size(); i += 2) {
    if (meta.elements[i].string != detail::kTensorNamesField) continue;
    DataSet probe{std::string(dataset)};
    DataSetAccess::set_encoded_field(probe, std::string(detail::kTensorNamesField),
                                     meta.elements[i + 1].string);
    return probe.get_meta_strings(detail::kTensorNamesField);
  }
  return {};
}

DataSet dataset_from_meta(std::string_view name, const Reply& meta) {
  if (meta.elements.size() % 2 != 0) {
    throw ProtocolError("metadata of dataset '" + std::string(name) +
                        "' has an odd number of elements");
  }
  DataSet dataset{std::string(name)};
  for (std::size_t i = 0; i + 1 < meta.elements.size(); i += 2) {
    const std::string& field = meta.elements[i].string;
    if (field == detail::kCompleteField) continue;
    DataSetAccess::set_encoded_field(dataset, field, meta.elements[i + 1].string);
  }
  return dataset;
}

void add_dataset_tensor_gets(Request& request, const std::string& dataset_key,
                             const std::vector<std::string>& tensor_names) {
  for (const auto& t : tensor_names) {
    request.command({"AI.TENSORGET", dataset_key + "." + t, "META", "BLOB"});
  }
}

}  // namespace client

namespace {

void check_meta_reply(const Reply& reply, std::string_view meta_key) {
  if (reply.is_error())
    client::throw_server_error(reply.string, "HGETALL '" + std::string(meta_key) + "'");
  if (!reply.is_array())
    throw ProtocolError("HGETALL '" + std::string(meta_key) + "' did not return an array");
}

}  // namespace

void Client::put_dataset(const DataSet& dataset) {
  auto fields = DataSetAccess::encoded_fields(dataset);
  auto tensors = DataSetAccess::tensors(dataset);
  if (fields.empty() && tensors.empty()) {
    throw InvalidArgumentError("dataset '" + dataset.name() +
                               "' has no tensors and no metadata fields; there is nothing to put");
  }
  std::string key = impl_->dataset_key(dataset.name(), false);
  std::string meta_key = key + ".meta";
  std::vector<std::string> tensor_keys;
  for (const auto& [name, tensor] : tensors) tensor_keys.push_back(key + "." + std::string(name));
  std::vector<TensorRef> refs;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i].second;
    refs.push_back(TensorRef{tensor_keys[i], t.dtype(), t.bytes().data(), t.byte_size(),
                             t.shape(), MemoryOrder::kC});
  }
  auto check = [&](client::Connection& c, std::size_t replies) {
    Impl::read_each(c, replies, [&](client::Connection& conn, std::size_t) {
      Reply reply = conn.read_reply();
      if (reply.is_error()) {
        client::throw_server_error(reply.string, "put dataset '" + dataset.name() + "'");
      }
    });
  };

  Request request;
  request.command({"DEL", meta_key});
  const bool through_shm = impl_->shm_put_batch_applies(refs);
  if (through_shm) {
    // Large tensors through shared memory (a batch of its own, two round trips): the old
    // metadata goes first, so no reader takes the dataset as complete while its tensors change,
    // and the new metadata and the completion field come after every tensor is stored.
    impl_->exchange(key, request, [&](client::Connection& c) { check(c, 1); });
    impl_->shm_put_batch(tensor_keys, refs);
    request = Request();
  }
  if (!fields.empty()) {
    request.command(2 + 2 * fields.size());
    request.arg("HMSET");
    request.arg(meta_key);
    for (const auto& [field, encoded] : fields) {
      request.arg(field);
      request.arg(encoded);
    }
  }
  if (!through_shm) {
    for (const TensorRef& ref : refs) Impl::add_tensor_set(request, ref.name, ref);
  }
  request.command({"HSET", meta_key, detail::kCompleteField, "1"});
  impl_->exchange(key, request, [&](client::Connection& c) { check(c, request.command_count()); });
}

DataSet Client::get_dataset(std::string_view name) {
  std::string key = impl_->dataset_key(name, true);
  std::string meta_key = key + ".meta";
  Request meta_request;
  meta_request.command({"HGETALL", meta_key});
  Reply meta =
      impl_->exchange(key, meta_request, [](client::Connection& c) { return c.read_reply(); });
  check_meta_reply(meta, meta_key);
  if (meta.elements.empty()) {
    throw KeyNotFoundError("dataset '" + std::string(name) + "' does not exist (no " + meta_key +
                           ")");
  }
  DataSet dataset = client::dataset_from_meta(name, meta);
  std::vector<std::string> names = client::tensor_names_of(meta, name);
  if (names.empty()) return dataset;
  std::vector<Tensor> tensors(names.size());
  std::vector<std::string> tensor_keys;
  for (const auto& t : names) tensor_keys.push_back(key + "." + t);
  if (!impl_->shm_get_batch(tensor_keys, tensors)) {
    Request request;
    client::add_dataset_tensor_gets(request, key, names);
    impl_->exchange(key, request, [&](client::Connection& c) {
      Impl::read_each(c, names.size(), [&](client::Connection& conn, std::size_t i) {
        tensors[i] = Impl::read_tensor(conn, tensor_keys[i]);
      });
    });
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    DataSetAccess::attach_tensor(dataset, names[i], std::move(tensors[i]));
  }
  return dataset;
}

void Client::delete_dataset(std::string_view name) {
  std::string key = impl_->dataset_key(name, true);
  std::string meta_key = key + ".meta";
  Request meta_request;
  meta_request.command({"HGETALL", meta_key});
  Reply meta =
      impl_->exchange(key, meta_request, [](client::Connection& c) { return c.read_reply(); });
  check_meta_reply(meta, meta_key);
  if (meta.elements.empty()) {
    throw KeyNotFoundError("delete dataset '" + std::string(name) + "': it does not exist");
  }
  std::vector<std::string> names = client::tensor_names_of(meta, name);
  Request request;
  request.command(2 + names.size());
  request.arg("DEL");
  request.arg(meta_key);
  for (const auto& t : names) request.arg(key + "." + t);
  impl_->call(key, request, "delete dataset '" + std::string(name) + "'");
}

bool Client::dataset_exists(std::string_view name) {
  Request request;
  std::string meta_key = impl_->dataset_meta_key(name, true);
  request.command({"HEXISTS", meta_key, detail::kCompleteField});
  return impl_->call(meta_key, request, "HEXISTS '" + meta_key + "'").integer > 0;
}

// The server can wait for the `.meta` key to appear, but `.COMPLETE` is a field written at the end
// of the same pipeline, so after the key appears this polls the field briefly.
bool Client::poll_dataset(std::string_view name, int poll_ms, int tries) {
  if (tries <= 0) return false;
  using Clock = std::chrono::steady_clock;
  milliseconds budget(static_cast<std::int64_t>(std::max(poll_ms, 0)) * tries);
  auto deadline = Clock::now() + budget;
  std::string meta_key = impl_->dataset_meta_key(name, true);
  for (milliseconds pause(1);; pause = std::min(pause * 2, milliseconds(20))) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (!impl_->wait_for_keys({meta_key}, std::max(left, milliseconds(0)))) return false;
    if (dataset_exists(name)) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
  }
}

void Client::copy_dataset(std::string_view source, std::string_view destination) {
  std::string from = impl_->dataset_key(source, true);
  std::string to = impl_->dataset_key(destination, false);
  if (from == to) return;
  Request meta_request;
  meta_request.command({"HGETALL", from + ".meta"});
  Reply meta =
      impl_->exchange(from, meta_request, [](client::Connection& c) { return c.read_reply(); });
  check_meta_reply(meta, from + ".meta");
  if (meta.elements.empty()) {
    throw KeyNotFoundError("copy dataset '" + std::string(source) + "': it does not exist");
  }
  std::vector<std::string> names = client::tensor_names_of(meta, source);
  // Same order as put_dataset: metadata, tensors (copied server-side), then the completion field.
  Request request;
  request.command({"DEL", to + ".meta"});
  std::size_t field_count = 0;
  for (std::size_t i = 0; i < meta.elements.size(); i += 2) {
    if (meta.elements[i].string != detail::kCompleteField) ++field_count;
  }
  if (field_count > 0) {
    request.command(2 + 2 * field_count);
    request.arg("HMSET");
    request.arg(to + ".meta");
    for (std::size_t i = 0; i + 1 < meta.elements.size(); i += 2) {
      if (meta.elements[i].string == detail::kCompleteField) continue;
      request.arg(meta.elements[i].string);
      request.arg(meta.elements[i + 1].string);
    }
  }
  std::vector<Tensor> tensors;  // cluster mode, other slot: the bytes go through the client
  std::vector<std::string> tensor_keys;
  if (impl_->same_slot(from, to)) {
    for (const auto& t : names) request.command({"COPY", from + "." + t, to + "." + t, "REPLACE"});
  } else if (!names.empty()) {
    Request get;
    client::add_dataset_tensor_gets(get, from, names);
    tensors.resize(names.size());
    impl_->exchange(from, get, [&](client::Connection& c) {
      Impl::read_each(c, names.size(), [&](client::Connection& conn, std::size_t i) {
        tensors[i] = Impl::read_tensor(conn, from + "." + names[i]);
      });
    });
    for (const auto& t : names) tensor_keys.push_back(to + "." + t);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const Tensor& t = tensors[i];
      Impl::add_tensor_set(request, tensor_keys[i],
                           TensorRef{tensor_keys[i], t.dtype(), t.bytes().data(), t.byte_size(),
                                     t.shape(), MemoryOrder::kC});
    }
  }
  request.command({"HSET", to + ".meta", detail::kCompleteField, "1"});
  impl_->exchange(to, request, [&](client::Connection& c) {
    Impl::read_each(c, request.command_count(), [&](client::Connection& conn, std::size_t) {
      Reply reply = conn.read_reply();
      if (reply.is_error()) {
        client::throw_server_error(reply.string, "copy dataset '" + std::string(source) + "'");
      }
    });
  });
}

void Client::rename_dataset(std::string_view old_name, std::string_view new_name) {
  copy_dataset(old_name, new_name);
  if (impl_->dataset_key(old_name, true) != impl_->dataset_key(new_name, false)) {
    delete_dataset(old_name);
  }
}

}  // namespace slipstream

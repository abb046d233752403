// Client tensor calls (single and batched), raw-key helpers and the blocking waits built on the
// server's SS.WAIT / SS.WAITLEN.
#include <algorithm>
#include <cstring>
#include <thread>

#include "client/client_impl.hpp"
#include "common/shape_text.hpp"
#include "common/tensor_layout.hpp"
#include "slipstream/client.hpp"

namespace slipstream {

using client::Request;
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::string quoted(std::string_view what, std::string_view key) {
  return std::string(what) + " '" + std::string(key) + "'";
}

// The total wait of a SmartRedis-style poll (check, sleep poll_ms, ... `tries` times).
milliseconds poll_budget(int poll_ms, int tries) {
  return milliseconds(static_cast<std::int64_t>(std::max(poll_ms, 0)) * tries);
}

bool is_unknown_command(const Reply& reply) {
  return reply.is_error() && reply.string.starts_with("ERR unknown command");
}

}  // namespace

InvalidArgumentError shape_mismatch_error(std::string_view key,
                                          std::span<const std::int64_t> actual,
                                          std::span<const std::int64_t> expected) {
  return InvalidArgumentError("tensor '" + std::string(key) + "' has shape " + shape_text(actual, "{}") +
                              ", not the expected " + shape_text(expected, "{}"));
}

// ---- Single tensors -----------------------------------------------------------------------------

void Client::put_tensor(std::string_view name, DType dtype, const void* data, std::size_t bytes,
                        std::span<const std::int64_t> shape, MemoryOrder order) {
  std::string key = impl_->tensor_key(name, false);
  if (impl_->shm_put(key, TensorRef{key, dtype, data, bytes, shape, order})) return;
  Request request;
  Impl::add_tensor_set(request, key, TensorRef{key, dtype, data, bytes, shape, order});
  impl_->call(key, request, quoted("put tensor", key));
}

void Client::put_tensor(std::string_view name, DType dtype, const void* data, std::size_t bytes,
                        std::span<const std::int64_t> shape, MemoryOrder order,
                        const CompressionOperator& compression) {
  std::string key = impl_->tensor_key(name, false);
  TensorRef ref{key, dtype, data, bytes, shape, order, &compression};
  Request request;
  Impl::add_tensor_set(request, key, ref);
  impl_->call(key, request, quoted("put tensor", key));
}

Tensor Client::get_tensor(std::string_view name) {
  std::string key = impl_->tensor_key(name, true);
  if (std::optional<Tensor> tensor = impl_->shm_get(key)) return std::move(*tensor);
  Request request;
  Impl::add_tensor_get(request, key);
  return impl_->exchange(key, request,
                         [&](client::Connection& c) { return Impl::read_tensor(c, key); });
}

// In C order the payload is read from the socket straight into `out`. The dtype, size and shape
// checks run when the reply's header has arrived; if one fails the payload is discarded (the
// stream stays in step) and the error is thrown once the reply is consumed.
std::vector<std::int64_t> Client::unpack_tensor(std::string_view name, DType dtype, void* out,
                                                std::size_t out_bytes,
                                                std::span<const std::int64_t> expected_shape,
                                                MemoryOrder order) {
  std::string key = impl_->tensor_key(name, true);
  if (out == nullptr && out_bytes > 0) throw InvalidArgumentError("output buffer is null");
  if (auto shape = impl_->shm_unpack(key, dtype, out, out_bytes, expected_shape, order)) {
    return std::move(*shape);
  }
  Request request;
  Impl::add_tensor_get(request, key);
  std::vector<std::int64_t> shape;
  std::unique_ptr<std::byte[]> staging;  // row-major copy when a transpose is needed
  std::exception_ptr mismatch;
  std::string error;
  auto target = [&](const TensorReplyHeader& header) -> std::byte* {
    shape = header.shape;
    try {
      if (header.dtype != dtype) {
        throw InvalidArgumentError("tensor '" + key + "' holds " +
                                   std::string(dtype_name(header.dtype)) + " elements, not " +
                                   std::string(dtype_name(dtype)));
      }
      if (!expected_shape.empty() && !std::equal(expected_shape.begin(), expected_shape.end(),
                                                 header.shape.begin(), header.shape.end())) {
        throw shape_mismatch_error(key, header.shape, expected_shape);
      }
      if (out_bytes < header.blob_size) {
        throw BufferTooSmallError("tensor '" + key + "' needs " + std::to_string(header.blob_size) +
                                  " bytes; the buffer has " + std::to_string(out_bytes));
      }
    } catch (const Error&) {
      mismatch = std::current_exception();
      return nullptr;
    }
    if (order == MemoryOrder::kFortran && header.shape.size() > 1) {
      staging = std::make_unique_for_overwrite<std::byte[]>(header.blob_size);
      return staging.get();
    }
    return static_cast<std::byte*>(out);
  };
  bool ok = impl_->exchange(key, request, [&](client::Connection& c) {
    return Impl::read_tensor_reply(c, target, &error);
  });
  if (!ok) client::throw_server_error(error, quoted("unpack tensor", key));
  if (mismatch) std::rethrow_exception(mismatch);
  if (staging) {
    c_to_fortran(staging.get(), static_cast<std::byte*>(out), dtype_size(dtype), shape);
  }
  return shape;
}

bool Client::delete_tensor(std::string_view name) {
  std::string key = impl_->tensor_key(name, true);
  Request request;
  request.command({"DEL", key});
  return impl_->call(key, request, quoted("delete tensor", key)).integer > 0;
}

bool Client::tensor_exists(std::string_view name) {
  return key_exists(impl_->tensor_key(name, true));
}

void Client::rename_tensor(std::string_view old_name, std::string_view new_name) {
  std::string from = impl_->tensor_key(old_name, true);
  std::string to = impl_->tensor_key(new_name, false);
  if (!impl_->same_slot(from, to)) {
    // Across shards RENAME would be refused (CROSSSLOT): copy through the client, then delete.
    if (from == to) return;
    impl_->copy_tensor_across_slots(from, to);
    Request request;
    request.command({"DEL", from});
    impl_->call(from, request, quoted("rename tensor", from));
    return;
  }
  Request request;
  request.command({"RENAME", from, to});
  impl_->call(from, request, quoted("rename tensor", from));
}

void Client::copy_tensor(std::string_view source, std::string_view destination) {
  std::string from = impl_->tensor_key(source, true);
  std::string to = impl_->tensor_key(destination, false);
  if (from == to) return;
  if (!impl_->same_slot(from, to)) return impl_->copy_tensor_across_slots(from, to);
  Request request;
  request.command({"COPY", from, to, "REPLACE"});
  if (impl_->call(from, request, quoted("copy tensor", from)).integer == 0) {
    throw KeyNotFoundError("copy tensor '" + from + "': it does not exist");
  }
}

// In cluster mode, keys of different slots may live on different shards: the bytes go through
// the client (AI.TENSORGET from one, AI.TENSORSET to the other), as SmartRedis does.
void Client::Impl::copy_tensor_across_slots(const std::string& from, const std::string& to) {
  Request get;
  add_tensor_get(get, from);
  Tensor tensor =
      exchange(from, get, [&](client::Connection& c) { return read_tensor(c, from); });
  Request put;
  add_tensor_set(put, to,
                 TensorRef{to, tensor.dtype(), tensor.bytes().data(), tensor.byte_size(),
                           tensor.shape(), MemoryOrder::kC});
  call(to, put, quoted("copy tensor to", to));
}

bool Client::poll_tensor(std::string_view name, int poll_ms, int tries) {
  return poll_key(impl_->tensor_key(name, true), poll_ms, tries);
}

// ---- Batches ------------------------------------------------------------------------------------

void Client::put_tensors(std::span<const TensorRef> tensors) {
  if (tensors.empty()) return;
  std::vector<std::string> keys;
  keys.reserve(tensors.size());
  for (const auto& t : tensors) keys.push_back(impl_->tensor_key(t.name, false));
  if (impl_->shm_put_batch(keys, tensors)) return;
  impl_->exchange_batch(
      tensors.size(), [&](std::size_t i) { return Route(keys[i]); },
      [&](Request& request, std::size_t i) { Impl::add_tensor_set(request, keys[i], tensors[i]); },
      [&](client::Connection& conn, std::size_t i) {
        Reply reply = conn.read_reply();
        if (reply.is_error()) {
          client::throw_server_error(reply.string, quoted("put tensor", keys[i]));
        }
      });
}

std::vector<Tensor> Client::get_tensors(std::span<const std::string> names) {
  std::vector<Tensor> tensors(names.size());
  if (names.empty()) return tensors;
  std::vector<std::string> keys;
  for (const auto& name : names) keys.push_back(impl_->tensor_key(name, true));
  if (impl_->shm_get_batch(keys, tensors)) return tensors;
  impl_->exchange_batch(
      names.size(), [&](std::size_t i) { return Route(keys[i]); },
      [&](Request& request, std::size_t i) { Impl::add_tensor_get(request, keys[i]); },
      [&](client::Connection& conn, std::size_t i) {
        tensors[i] = Impl::read_tensor(conn, keys[i]);
      });
  return tensors;
}

// ---- Raw keys and waits -------------------------------------------------------------------------

bool Client::key_exists(std::string_view key) {
  Request request;
  request.command({"EXISTS", key});
  return impl_->call(key, request, quoted("EXISTS", key)).integer > 0;
}

bool Client::poll_key(std::string_view key, int poll_ms, int tries) {
  if (tries <= 0) return false;
  return impl_->wait_for_keys({std::string(key)}, poll_budget(poll_ms, tries));
}

bool Client::wait_for_keys(std::span<const std::string> keys, milliseconds timeout) {
  if (keys.empty()) return true;
  return impl_->wait_for_keys(std::vector<std::string>(keys.begin(), keys.end()), timeout);
}

void Client::put_bytes(std::string_view key, std::string_view bytes) {
  Request request;
  request.command({"SET", key, bytes});
  impl_->call(key, request, quoted("SET", key));
}

std::string Client::get_bytes(std::string_view key) {
  Request request;
  request.command({"GET", key});
  Reply reply = impl_->call(key, request, quoted("GET", key));
  if (reply.is_nil()) throw KeyNotFoundError("get bytes '" + std::string(key) + "': no such key");
  return std::move(reply.string);
}

bool Client::delete_bytes(std::string_view key) {
  Request request;
  request.command({"UNLINK", key});
  return impl_->call(key, request, quoted("UNLINK", key)).integer > 0;
}

// Waits with one SS.WAIT request, which the server parks until the keys exist or the timeout
// passes, so waiting costs no traffic. A server without SS.WAIT (plain Redis) is remembered and
// polled with EXISTS instead.
bool Client::Impl::wait_for_keys(const std::vector<std::string>& keys, milliseconds timeout) {
  for (std::size_t i = 1; i < keys.size(); ++i) {
    if (!same_slot(keys[0], keys[i])) return wait_for_keys_across_slots(keys, timeout);
  }
  auto all_exist = [&] {
    Request request;
    request.command(1 + keys.size());
    request.arg("EXISTS");
    for (const auto& k : keys) request.arg(k);
    return call(keys[0], request, "EXISTS").integer >= static_cast<std::int64_t>(keys.size());
  };
  if (timeout.count() <= 0) return all_exist();
  if (server_waits_) {
    Request request;
    request.command(3 + keys.size());
    request.arg("SS.WAIT");
    for (const auto& k : keys) request.arg(k);
    request.arg("TIMEOUT");
    request.arg(static_cast<std::int64_t>(timeout == kWaitForever ? 0 : timeout.count()));
    Reply reply = exchange(
        keys[0], request, [](client::Connection& c) { return c.read_reply(); }, timeout);
    if (!is_unknown_command(reply)) {
      if (reply.is_error()) client::throw_server_error(reply.string, "SS.WAIT");
      return !reply.is_nil();
    }
    server_waits_ = false;
  }
  auto deadline = timeout == kWaitForever ? Clock::time_point::max() : Clock::now() + timeout;
  for (milliseconds pause(1);; pause = std::min(pause * 2, milliseconds(50))) {
    if (all_exist()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
  }
}

// Cluster mode, keys of several slots (a server-side wait is per shard and per slot): wait for
// each slot's keys in turn within the one deadline.
bool Client::Impl::wait_for_keys_across_slots(const std::vector<std::string>& keys,
                                              milliseconds timeout) {
  std::vector<std::vector<std::string>> by_slot;
  for (const auto& key : keys) {
    auto same = std::find_if(by_slot.begin(), by_slot.end(),
                             [&](const auto& group) { return same_slot(group[0], key); });
    if (same == by_slot.end()) {
      by_slot.push_back({key});
    } else {
      same->push_back(key);
    }
  }
  auto deadline = timeout == kWaitForever ? Clock::time_point::max() : Clock::now() + timeout;
  for (const auto& group : by_slot) {
    milliseconds left = timeout;
    if (timeout != kWaitForever && timeout.count() > 0) {
      left = std::max(milliseconds(0),
                      std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
    }
    if (!wait_for_keys(group, left)) return false;
  }
  return true;
}

bool Client::Impl::wait_for_length(const std::string& key, std::int64_t length,
                                   milliseconds timeout) {
  if (timeout.count() > 0 && server_waits_) {
    Request request;
    request.command(5);
    request.arg("SS.WAITLEN");
    request.arg(key);
    request.arg(length);
    request.arg("TIMEOUT");
    request.arg(static_cast<std::int64_t>(timeout == kWaitForever ? 0 : timeout.count()));
    Reply reply = exchange(
        key, request, [](client::Connection& c) { return c.read_reply(); }, timeout);
    if (!is_unknown_command(reply)) {
      if (reply.is_error()) client::throw_server_error(reply.string, "SS.WAITLEN");
      return !reply.is_nil();
    }
    server_waits_ = false;
  }
  auto deadline = timeout == kWaitForever ? Clock::time_point::max() : Clock::now() + timeout;
  for (milliseconds pause(1);; pause = std::min(pause * 2, milliseconds(50))) {
    if (list_length(key) >= length) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
  }
}

std::int64_t Client::Impl::list_length(const std::string& key) {
  Request request;
  request.command({"LLEN", key});
  Reply reply = call(key, request, quoted("LLEN", key));
  if (!reply.is_integer()) throw ProtocolError("LLEN '" + key + "' did not return an integer");
  return reply.integer;
}

}  // namespace slipstream

// Client construction, the request/reply exchange, RedisAI tensor reply parsing, ensemble key
// prefixes and the generic command escape hatch.
#include "slipstream/client.hpp"

#include <cctype>
#include <cstdlib>

#include "client/chunk_codec.hpp"
#include "client/client_impl.hpp"
#include "common/tensor_layout.hpp"
#include "common/command_keys.hpp"
#include "common/slot.hpp"

namespace slipstream {

using client::Request;
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::vector<std::string> split_prefixes(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// How the raw-command escape hatch routes in cluster mode. The client has no command table, so:
// model and script storage goes to every shard; RedisAI runs go by their tensor keys (which must
// share a slot); commands known to take no key go to the default node; any other command is
// routed by its first argument, and a MOVED reply corrects a wrong guess.
struct RawRoute {
  Route route = Route::any();
  bool every_node = false;
};

RawRoute route_of(const std::vector<std::string_view>& args, bool clustered) {
  RawRoute result;
  if (!clustered || args.size() < 2) return result;
  std::string_view name = args[0];
  for (std::string_view every : {"AI.MODELSTORE", "AI.MODELSET", "AI.MODELDEL", "AI.SCRIPTSTORE",
                                 "AI.SCRIPTSET", "AI.SCRIPTDEL", "FLUSHALL", "FLUSHDB"}) {
    if (equals_ignoring_case(name, every)) {
      result.every_node = true;
      return result;
    }
  }
  for (std::string_view keyless :
       {"AI.MODELGET", "AI.SCRIPTGET", "AI.INFO", "AI.CONFIG", "PING", "ECHO", "INFO", "DBSIZE",
        "KEYS", "SCAN", "CONFIG", "SAVE", "LASTSAVE", "SHUTDOWN", "TIME", "COMMAND", "CLIENT",
        "HELLO", "AUTH", "SELECT", "QUIT", "CLUSTER", "READONLY", "READWRITE", "ASKING"}) {
    if (equals_ignoring_case(name, keyless)) return result;
  }
  std::vector<std::size_t> positions = redisai_run_key_positions(args);
  if (positions.empty()) {
    if (!name.starts_with("AI.MODEL") && !name.starts_with("AI.SCRIPT")) result.route = args[1];
    return result;
  }
  int slot = key_slot(args[positions[0]]);
  for (std::size_t p : positions) {
    if (key_slot(args[p]) != slot) {
      throw InvalidArgumentError(
          std::string(name) + " '" + std::string(args[1]) + "': tensor '" +
          std::string(args[positions[0]]) + "' and tensor '" + std::string(args[p]) +
          "' are in different hash slots, so no one shard holds both. In cluster mode a run's "
          "inputs and outputs must share a {hash tag}, e.g. '{run1}.in' and '{run1}.out'");
    }
  }
  result.route = args[positions[0]];
  return result;
}

ClientOptions options_for(std::string_view address) {
  ClientOptions options;
  options.address = std::string(address);
  return options;
}

}  // namespace

// ---- Impl: construction (connections and routing: client_cluster.cpp) --------------------------

Client::Impl::Impl(ClientOptions options) : options_(std::move(options)) {
  std::string text =
      options_.address.empty() ? client::address_from_environment() : options_.address;
  address_ = client::parse_address(text);
  address_text_ = address_.to_string();
  password_ = options_.password ? options_.password : env("SLIPSTREAM_PASSWORD");
  if (password_ && password_->empty()) password_.reset();

  put_prefix_ = options_.key_prefix_out ? *options_.key_prefix_out : env("SSKEYOUT").value_or("");
  get_prefixes_ = split_prefixes(options_.key_prefixes_in ? *options_.key_prefixes_in
                                                          : env("SSKEYIN").value_or(""));
  if (!get_prefixes_.empty()) data_source_ = get_prefixes_.front();
  shm_wanted_ = options_.shared_memory == SharedMemoryMode::kAuto &&
                address_.kind == client::Address::Kind::kUnix && env("SLIPSTREAM_SHM") != "off";

  std::lock_guard lock(io_mutex_);
  connect_first();
}

std::chrono::milliseconds Client::Impl::io_timeout_with(std::chrono::milliseconds wait) const {
  std::chrono::milliseconds timeout(0);  // none
  if (wait != kWaitForever && options_.command_timeout.count() > 0) {
    timeout = options_.command_timeout + wait;
  }
  if (wait_cap_.count() > 0 && (timeout.count() == 0 || timeout > wait_cap_)) timeout = wait_cap_;
  return timeout;
}

Reply Client::Impl::call(Route route, const Request& request, std::string_view context,
                         std::chrono::milliseconds wait) {
  Reply reply = exchange(
      route, request, [](client::Connection& c) { return c.read_reply(); }, wait);
  if (reply.is_error()) client::throw_server_error(reply.string, context);
  return reply;
}

void Client::Impl::read_each(
    client::Connection& connection, std::size_t count,
    const std::function<void(client::Connection&, std::size_t)>& read_one) {
  std::exception_ptr first;
  for (std::size_t i = 0; i < count; ++i) {
    try {
      read_one(connection, i);
    } catch (const Error& error) {
      if (client::breaks_connection(error.code())) throw;
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

// ---- Tensor wire format -----------------------------------------------------------------------

void Client::Impl::add_tensor_set(Request& request, std::string_view key, const TensorRef& t) {
  if (key.empty()) throw InvalidArgumentError("tensor name must not be empty");
  std::size_t count = element_count(t.shape);
  std::size_t expected = count * dtype_size(t.dtype);
  if (t.bytes != expected) {
    throw InvalidArgumentError("tensor '" + std::string(key) + "': data is " +
                               std::to_string(t.bytes) + " bytes but " + std::to_string(count) +
                               " " + std::string(dtype_name(t.dtype)) + " elements need " +
                               std::to_string(expected));
  }
  if (t.bytes > 0 && t.data == nullptr) {
    throw InvalidArgumentError("tensor '" + std::string(key) + "': data pointer is null");
  }
  const bool transpose = t.order == MemoryOrder::kFortran && t.shape.size() > 1;
  std::unique_ptr<std::byte[]> transposed;
  if (transpose) {
    transposed = std::make_unique_for_overwrite<std::byte[]>(t.bytes);
    fortran_to_c(static_cast<const std::byte*>(t.data), transposed.get(), dtype_size(t.dtype),
                 t.shape);
  }
  // A compressed tensor: its frame, encoded here, goes as ENCODED BLOB (the server checks its
  // header and stores it as it is).
  std::vector<std::byte> frame;
  if (t.compression != nullptr) {
    const std::string what = "tensor '" + std::string(key) + "'";
    auto codec = client::make_chunk_codec(*t.compression, "operator of " + what);
    if (std::string misfit = codec->misfit(t.dtype, t.shape.size()); !misfit.empty()) {
      throw InvalidArgumentError(what + ": " + misfit);
    }
    const std::vector<std::uint64_t> extent(t.shape.begin(), t.shape.end());
    const auto* raw = transpose ? transposed.get() : static_cast<const std::byte*>(t.data);
    frame = codec->encode(t.dtype, extent, {raw, t.bytes}, what);
  }
  request.command(5 + t.shape.size() + (t.compression != nullptr ? 1 : 0));
  request.arg("AI.TENSORSET");
  request.arg(key);
  request.arg(dtype_name(t.dtype));
  for (auto d : t.shape) request.arg(d);
  if (t.compression != nullptr) {
    request.arg("ENCODED");
    request.arg("BLOB");
    const std::size_t size = frame.size();
    auto owned = std::make_unique_for_overwrite<std::byte[]>(size);
    std::copy(frame.begin(), frame.end(), owned.get());
    request.arg_owned(std::move(owned), size);
    return;
  }
  request.arg("BLOB");
  if (transpose) {
    request.arg_owned(std::move(transposed), t.bytes);
  } else {
    request.arg_borrowed(t.data, t.bytes);
  }
}

// ENCODED: a compressed tensor comes as its frame, decoded by read_tensor_reply.
void Client::Impl::add_tensor_get(Request& request, std::string_view key) {
  request.command({"AI.TENSORGET", key, "META", "BLOB", "ENCODED"});
}

// Reads the reply to AI.TENSORGET META BLOB ENCODED: an array of label/value pairs ("dtype", TYPE,
// "shape", [dims], "blob", bytes). Labels are matched by name, case-insensitively, so a server that
// orders them differently still works, as long as dtype and shape come before the blob: that
// order is what lets the payload be read straight into a buffer chosen from its size and shape.
// A compressed tensor has a "frame" (a codec frame) instead of the blob, decoded into the buffer.
bool Client::Impl::read_tensor_reply(client::Connection& c, const TensorTarget& target,
                                     std::string* error) {
  std::string line;
  char type = c.read_line(line);
  if (type == '-') {
    *error = line;
    return false;
  }
  if (type != '*') c.protocol_error("AI.TENSORGET reply is not an array");
  std::int64_t count = c.parse_integer(line);
  if (count < 0 || count % 2 != 0) c.protocol_error("AI.TENSORGET reply has an odd length");
  std::optional<DType> dtype;
  std::optional<std::vector<std::int64_t>> shape;
  bool have_blob = false;
  for (std::int64_t i = 0; i < count; i += 2) {
    Reply label = c.read_reply();
    if (!label.is_string()) c.protocol_error("AI.TENSORGET reply label is not a string");
    if (equals_ignoring_case(label.string, "dtype")) {
      Reply value = c.read_reply();
      dtype = parse_dtype(value.string);
      if (!value.is_string() || !dtype) {
        c.protocol_error("unsupported tensor dtype '" + value.string + "'");
      }
    } else if (equals_ignoring_case(label.string, "shape")) {
      Reply value = c.read_reply();
      if (!value.is_array()) c.protocol_error("tensor shape is not an array");
      shape.emplace();
      for (const auto& d : value.elements) {
        if (!d.is_integer() || d.integer <= 0) c.protocol_error("tensor dimension is invalid");
        shape->push_back(d.integer);
      }
    } else if (equals_ignoring_case(label.string, "blob")) {
      if (c.read_line(line) != '$') c.protocol_error("tensor blob is not a bulk string");
      if (!dtype || !shape) c.protocol_error("tensor blob arrived before its dtype and shape");
      std::int64_t size = c.parse_integer(line);
      std::size_t expected = 0;
      try {
        expected = element_count(*shape) * dtype_size(*dtype);
      } catch (const InvalidArgumentError& e) {
        c.protocol_error(std::string("tensor shape is invalid: ") + e.what());
      }
      if (size < 0 || static_cast<std::size_t>(size) != expected) {
        c.protocol_error("tensor blob is " + std::to_string(size) + " bytes; its shape needs " +
                         std::to_string(expected));
      }
      std::byte* destination = target({*dtype, *shape, expected});
      if (destination != nullptr) {
        c.read_bulk_body(destination, expected);
      } else {
        c.skip_bulk_body(expected);
      }
      have_blob = true;
    } else if (equals_ignoring_case(label.string, "frame")) {
      if (c.read_line(line) != '$') c.protocol_error("tensor frame is not a bulk string");
      if (!dtype || !shape) c.protocol_error("tensor frame arrived before its dtype and shape");
      const std::int64_t size = c.parse_integer(line);
      if (size < 0) c.protocol_error("tensor frame has a negative size");
      std::size_t expected = 0;
      try {
        expected = element_count(*shape) * dtype_size(*dtype);
      } catch (const InvalidArgumentError& e) {
        c.protocol_error(std::string("tensor shape is invalid: ") + e.what());
      }
      std::vector<std::byte> frame(static_cast<std::size_t>(size));
      c.read_bulk_body(frame.data(), frame.size());
      std::byte* destination = target({*dtype, *shape, expected});
      if (destination != nullptr) {
        const std::vector<std::uint64_t> extent(shape->begin(), shape->end());
        client::decode_chunk(frame, *dtype, extent, {destination, expected}, "the tensor");
      }
      have_blob = true;
    } else {
      c.read_reply();  // a field this client does not use
    }
  }
  if (!have_blob) c.protocol_error("AI.TENSORGET reply has no blob");
  return true;
}

Tensor Client::Impl::read_tensor(client::Connection& c, std::string_view key) {
  Tensor tensor;
  std::string error;
  bool ok = read_tensor_reply(
      c,
      [&](const TensorReplyHeader& header) {
        tensor = Tensor::uninitialized(header.dtype, header.shape);
        return tensor.mutable_bytes().data();
      },
      &error);
  if (!ok) client::throw_server_error(error, "get tensor '" + std::string(key) + "'");
  return tensor;
}

// ---- Impl: prefixes ---------------------------------------------------------------------------

std::string Client::Impl::prefixed(std::string_view name, bool enabled, bool for_read) const {
  std::lock_guard lock(settings_mutex_);
  const std::string& prefix = for_read ? data_source_ : put_prefix_;
  if (!enabled || prefix.empty()) return std::string(name);
  return prefix + "." + std::string(name);
}

std::string Client::Impl::tensor_key(std::string_view name, bool for_read) const {
  if (name.empty()) throw InvalidArgumentError("tensor name must not be empty");
  bool enabled;
  {
    std::lock_guard lock(settings_mutex_);
    enabled = use_tensor_prefix_;
  }
  return prefixed(name, enabled, for_read);
}

std::string Client::Impl::dataset_key(std::string_view name, bool for_read) const {
  if (name.empty()) throw InvalidArgumentError("dataset name must not be empty");
  bool enabled;
  {
    std::lock_guard lock(settings_mutex_);
    enabled = use_dataset_prefix_;
  }
  std::string tagged;  // the braces make the name a Redis Cluster hash tag, as SmartRedis does
  tagged.reserve(name.size() + 2);
  tagged.push_back('{');
  tagged.append(name);
  tagged.push_back('}');
  return prefixed(tagged, enabled, for_read);
}

std::string Client::Impl::list_key(std::string_view name, bool for_read) const {
  if (name.empty()) throw InvalidArgumentError("list name must not be empty");
  bool enabled;
  {
    std::lock_guard lock(settings_mutex_);
    enabled = use_list_prefix_;
  }
  return prefixed(name, enabled, for_read);
}

void Client::Impl::set_data_source(std::string_view source) {
  std::lock_guard lock(settings_mutex_);
  for (const auto& prefix : get_prefixes_) {
    if (prefix == source) {
      data_source_ = prefix;
      return;
    }
  }
  throw InvalidArgumentError("data source '" + std::string(source) +
                             "' is not one of the SSKEYIN prefixes given at construction");
}

// ---- Client -------------------------------------------------------------------------------------

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Client::Client(std::string_view address) : Client(options_for(address)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

const std::string& Client::address() const noexcept { return impl_->address(); }

void Client::set_data_source(std::string_view source) { impl_->set_data_source(source); }
void Client::use_tensor_ensemble_prefix(bool enable) {
  impl_->set_prefix_flag(impl_->use_tensor_prefix_, enable);
}
void Client::use_dataset_ensemble_prefix(bool enable) {
  impl_->set_prefix_flag(impl_->use_dataset_prefix_, enable);
}
void Client::use_list_ensemble_prefix(bool enable) {
  impl_->set_prefix_flag(impl_->use_list_prefix_, enable);
}
void Client::use_model_ensemble_prefix(bool enable) {
  impl_->set_prefix_flag(impl_->use_model_prefix_, enable);
}
bool Client::model_ensemble_prefix_enabled() const { return impl_->model_prefix(); }

Reply Client::command(const std::vector<std::string_view>& args) {
  if (args.empty()) throw InvalidArgumentError("command needs at least a command name");
  Request request;
  request.command(args.size());
  for (auto a : args) request.arg(a);
  RawRoute route = route_of(args, impl_->clustered());
  if (route.every_node) return impl_->broadcast(request, args[0]);
  return impl_->call(route.route, request, args[0]);
}

std::vector<Reply> Client::commands(const std::vector<std::vector<std::string_view>>& batch) {
  if (batch.empty()) return {};
  std::vector<Route> routes;
  routes.reserve(batch.size());
  for (const auto& args : batch) {
    if (args.empty()) throw InvalidArgumentError("command needs at least a command name");
    routes.push_back(route_of(args, impl_->clustered()).route);
  }
  auto add = [&](Request& request, std::size_t i) {
    request.command(batch[i].size());
    for (auto a : batch[i]) request.arg(a);
  };
  std::vector<Reply> replies(batch.size());
  impl_->exchange_batch(
      batch.size(), [&](std::size_t i) { return routes[i]; }, add,
      [&](client::Connection& c, std::size_t i) { replies[i] = c.read_reply(); });
  if (!impl_->clustered()) return replies;
  // A command routed by a guess (its first argument) may have gone to the wrong shard: send it
  // again on its own, following the redirect.
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (!replies[i].is_error() || !replies[i].string.starts_with("MOVED ")) continue;
    Request request;
    add(request, i);
    try {
      replies[i] = impl_->exchange(routes[i], request, [](client::Connection& c) {
        Reply reply = c.read_reply();
        if (reply.is_error() && reply.string.starts_with("MOVED ")) {
          throw ServerError(reply.string, reply.string);
        }
        return reply;
      });
    } catch (const ServerError& e) {
      replies[i].string = e.server_text();
    }
  }
  return replies;
}

}  // namespace slipstream

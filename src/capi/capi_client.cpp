// C API: client handles (create, destroy, address), ensemble prefix settings, server info and
// generic commands with their reply handles.
#include <chrono>
#include <memory>

#include "capi/capi_internal.hpp"

using namespace slipstream::capi;
using slipstream::Reply;

namespace {

const Reply& reply_of(const slipstream_reply_t* reply) {
  return deref(reinterpret_cast<const Reply*>(reply), "reply handle");
}

slipstream_status_t create_client(const slipstream_client_options_t* options,
                                  slipstream_client_t** client) {
  return guarded([&] {
    if (client == nullptr) throw slipstream::InvalidArgumentError("client output pointer is NULL");
    slipstream::ClientOptions cpp = client_options_arg(options);
    auto handle = std::make_unique<slipstream_client>(slipstream::Client(std::move(cpp)));
    *client = handle.release();
  });
}

template <typename Setter>
slipstream_status_t set_prefix_flag(slipstream_client_t* client, Setter setter) {
  return guarded([&] { setter(client_of(client)); });
}

}  // namespace

extern "C" {

slipstream_status_t slipstream_client_options_init(slipstream_client_options_t* options) {
  return guarded([&] {
    deref(options, "options") = slipstream_client_options_t{};
    options->command_timeout_ms = -1;
  });
}

slipstream_status_t slipstream_client_create(const char* address, size_t address_length,
                                             slipstream_client_t** client) {
  slipstream_client_options_t options{};
  options.address = address;
  options.address_length = address_length;
  options.command_timeout_ms = -1;
  return create_client(&options, client);
}

slipstream_status_t slipstream_client_create_with_options(
    const slipstream_client_options_t* options, slipstream_client_t** client) {
  return create_client(options, client);
}

slipstream_status_t slipstream_client_destroy(slipstream_client_t** client) {
  return guarded([&] {
    if (client == nullptr) return;
    delete *client;
    *client = nullptr;
  });
}

slipstream_status_t slipstream_client_address(const slipstream_client_t* client,
                                              const char** address, size_t* length) {
  return guarded([&] {
    const std::string& text = deref(client, "client handle").client.address();
    deref(address, "address output pointer") = text.c_str();
    if (length != nullptr) *length = text.size();
  });
}

// ---- Ensemble prefixes
// ---------------------------------------------------------------------------

slipstream_status_t slipstream_set_data_source(slipstream_client_t* client, const char* source,
                                               size_t source_length) {
  return guarded(
      [&] { client_of(client).set_data_source(string_arg(source, source_length, "source")); });
}

slipstream_status_t slipstream_use_tensor_ensemble_prefix(slipstream_client_t* client, int enable) {
  return set_prefix_flag(client, [&](auto& c) { c.use_tensor_ensemble_prefix(enable != 0); });
}

slipstream_status_t slipstream_use_dataset_ensemble_prefix(slipstream_client_t* client,
                                                           int enable) {
  return set_prefix_flag(client, [&](auto& c) { c.use_dataset_ensemble_prefix(enable != 0); });
}

slipstream_status_t slipstream_use_list_ensemble_prefix(slipstream_client_t* client, int enable) {
  return set_prefix_flag(client, [&](auto& c) { c.use_list_ensemble_prefix(enable != 0); });
}

slipstream_status_t slipstream_use_model_ensemble_prefix(slipstream_client_t* client, int enable) {
  return set_prefix_flag(client, [&](auto& c) { c.use_model_ensemble_prefix(enable != 0); });
}

slipstream_status_t slipstream_model_ensemble_prefix_enabled(const slipstream_client_t* client,
                                                             int* enabled) {
  return guarded([&] {
    const bool value = deref(client, "client handle").client.model_ensemble_prefix_enabled();
    deref(enabled, "enabled output pointer") = value ? 1 : 0;
  });
}

// ---- Server info and generic commands ----------------------------------------------------------

slipstream_status_t slipstream_info(slipstream_client_t* client, const char* section,
                                    size_t section_length, char** text, size_t* length) {
  return guarded([&] {
    std::vector<std::string_view> args{"INFO"};
    std::string_view section_name = string_arg(section, section_length, "section");
    if (!section_name.empty()) args.push_back(section_name);
    Reply reply = client_of(client).command(args);
    if (!reply.is_string()) {
      throw slipstream::ProtocolError("INFO did not answer with a string");
    }
    string_out(reply.string, text, length, "text");
  });
}

slipstream_status_t slipstream_command(slipstream_client_t* client, const char* const* args,
                                       const size_t* arg_lengths, size_t argc,
                                       slipstream_reply_t** reply) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(reply, "reply output pointer");
    const std::vector<std::string> strings = string_list_arg(args, arg_lengths, argc, "args");
    const std::vector<std::string_view> views(strings.begin(), strings.end());
    auto result = std::make_unique<Reply>(cpp.command(views));
    *reply = reinterpret_cast<slipstream_reply_t*>(result.release());
  });
}

slipstream_status_t slipstream_reply_destroy(slipstream_reply_t** reply) {
  return guarded([&] {
    if (reply == nullptr) return;
    delete reinterpret_cast<Reply*>(*reply);
    *reply = nullptr;
  });
}

slipstream_status_t slipstream_reply_kind(const slipstream_reply_t* reply,
                                          slipstream_reply_kind_t* kind) {
  return guarded([&] {
    deref(kind, "kind output pointer") = static_cast<slipstream_reply_kind_t>(reply_of(reply).kind);
  });
}

slipstream_status_t slipstream_reply_string(const slipstream_reply_t* reply, const char** string,
                                            size_t* length) {
  return guarded([&] {
    const Reply& value = reply_of(reply);
    switch (value.kind) {
      case Reply::Kind::kString:
      case Reply::Kind::kStatus:
      case Reply::Kind::kError:
      case Reply::Kind::kDouble:
      case Reply::Kind::kBigNumber:
        break;
      default:
        throw slipstream::InvalidArgumentError(
            "the reply is not a string, status, error, double "
            "or big number (its kind is " +
            std::to_string(static_cast<int>(value.kind)) + ")");
    }
    deref(string, "string output pointer") = value.string.c_str();
    if (length != nullptr) *length = value.string.size();
  });
}

slipstream_status_t slipstream_reply_integer(const slipstream_reply_t* reply, int64_t* value) {
  return guarded([&] {
    const Reply& r = reply_of(reply);
    if (r.kind != Reply::Kind::kInteger && r.kind != Reply::Kind::kBool) {
      throw slipstream::InvalidArgumentError("the reply is not an integer or bool (its kind is " +
                                             std::to_string(static_cast<int>(r.kind)) + ")");
    }
    deref(value, "value output pointer") = r.integer;
  });
}

slipstream_status_t slipstream_reply_element_count(const slipstream_reply_t* reply, size_t* count) {
  return guarded([&] {
    const Reply& r = reply_of(reply);
    deref(count, "count output pointer") = r.is_array() ? r.elements.size() : 0;
  });
}

slipstream_status_t slipstream_reply_element(const slipstream_reply_t* reply, size_t index,
                                             const slipstream_reply_t** element) {
  return guarded([&] {
    const Reply& r = reply_of(reply);
    if (!r.is_array() || index >= r.elements.size()) {
      throw slipstream::InvalidArgumentError(
          "reply element " + std::to_string(index) + " is out of range (the reply has " +
          std::to_string(r.is_array() ? r.elements.size() : 0) + " elements)");
    }
    deref(element, "element output pointer") =
        reinterpret_cast<const slipstream_reply_t*>(&r.elements[index]);
  });
}

}  // extern "C"

// C API: the shared-memory calls of the client: loans (filled, then committed as a tensor without
// a copy), views of stored tensors, and the client's statistics of which path it took.
#include <memory>
#include <string>
#include <utility>

#include "capi/capi_internal.hpp"

// The loan and view handles own the C++ objects; destroying a handle gives its memory back.
struct slipstream_loan {
  explicit slipstream_loan(slipstream::TensorLoan l) : loan(std::move(l)) {}
  slipstream::TensorLoan loan;
};

struct slipstream_view {
  explicit slipstream_view(slipstream::TensorView v) : view(std::move(v)) {}
  slipstream::TensorView view;
};

using namespace slipstream::capi;

namespace {

const slipstream::TensorLoan& loan_of(const slipstream_loan_t* loan) {
  return deref(loan, "loan handle").loan;
}

const slipstream::TensorView& view_of(const slipstream_view_t* view) {
  return deref(view, "view handle").view;
}

}  // namespace

extern "C" {

slipstream_status_t slipstream_loan(slipstream_client_t* client, size_t bytes,
                                    slipstream_loan_t** loan) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(loan, "loan output pointer");
    auto handle = std::make_unique<slipstream_loan_t>(cpp.loan(bytes));
    *loan = handle.release();
  });
}

slipstream_status_t slipstream_loan_destroy(slipstream_loan_t** loan) {
  return guarded([&] {
    if (loan == nullptr) return;
    delete *loan;
    *loan = nullptr;
  });
}

slipstream_status_t slipstream_loan_data(const slipstream_loan_t* loan, void** data,
                                         size_t* bytes) {
  return guarded([&] {
    const slipstream::TensorLoan& l = loan_of(loan);
    deref(data, "data output pointer") = l.bytes().data();
    if (bytes != nullptr) *bytes = l.size();
  });
}

slipstream_status_t slipstream_loan_shared(const slipstream_loan_t* loan, int* shared) {
  return guarded([&] {
    const slipstream::TensorLoan& l = loan_of(loan);
    flag_out(l.shared(), &deref(shared, "shared output pointer"));
  });
}

slipstream_status_t slipstream_put_tensor_loan(slipstream_client_t* client, const char* name,
                                               size_t name_length, slipstream_loan_t** loan,
                                               const int64_t* shape, size_t rank,
                                               slipstream_dtype_t dtype) {
  return guarded([&] {
    if (loan == nullptr || *loan == nullptr) {
      throw slipstream::InvalidArgumentError(
          "put tensor: the loan handle is NULL (never made, destroyed or already committed)");
    }
    // Consumed from here on, whatever happens: the handle is freed when `taken` goes.
    std::unique_ptr<slipstream_loan_t> taken(std::exchange(*loan, nullptr));
    slipstream::Client& cpp = client_of(client);
    const auto type = dtype_arg(dtype);
    const auto dims = shape_arg(shape, rank);
    tensor_bytes(type, dims);  // a bad dimension or an overflow is refused before the server
    cpp.put_tensor(string_arg(name, name_length, "name"), std::move(taken->loan), type, dims);
  });
}

slipstream_status_t slipstream_view_tensor(slipstream_client_t* client, const char* name,
                                           size_t name_length, slipstream_view_t** view) {
  return guarded([&] {
    slipstream::Client& cpp = client_of(client);
    deref(view, "view output pointer");
    auto handle =
        std::make_unique<slipstream_view_t>(cpp.view_tensor(string_arg(name, name_length, "name")));
    *view = handle.release();
  });
}

slipstream_status_t slipstream_view_destroy(slipstream_view_t** view) {
  return guarded([&] {
    if (view == nullptr) return;
    delete *view;
    *view = nullptr;
  });
}

slipstream_status_t slipstream_view_dtype(const slipstream_view_t* view,
                                          slipstream_dtype_t* dtype) {
  return guarded([&] {
    const slipstream::TensorView& v = view_of(view);
    deref(dtype, "dtype output pointer") = static_cast<slipstream_dtype_t>(v.dtype());
  });
}

slipstream_status_t slipstream_view_shape(const slipstream_view_t* view, const int64_t** shape,
                                          size_t* rank) {
  return guarded([&] {
    const slipstream::TensorView& v = view_of(view);
    deref(shape, "shape output pointer") = v.shape().data();
    deref(rank, "rank output pointer") = v.shape().size();
  });
}

slipstream_status_t slipstream_view_data(const slipstream_view_t* view, slipstream_dtype_t dtype,
                                         size_t expected_rank, const void** data, size_t* bytes) {
  return guarded([&] {
    const slipstream::TensorView& v = view_of(view);
    deref(data, "data output pointer");
    const slipstream::DType wanted = dtype_arg(dtype);
    if (wanted != v.dtype()) {
      throw slipstream::InvalidArgumentError(
          "the view holds " + std::string(slipstream::dtype_name(v.dtype())) + " elements, not " +
          std::string(slipstream::dtype_name(wanted)));
    }
    if (expected_rank > 0 && expected_rank != v.shape().size()) {
      throw slipstream::InvalidArgumentError("the view has " + std::to_string(v.shape().size()) +
                                             " dimensions, not the expected " +
                                             std::to_string(expected_rank));
    }
    *data = v.bytes().data();
    if (bytes != nullptr) *bytes = v.byte_size();
  });
}

slipstream_status_t slipstream_view_shared(const slipstream_view_t* view, int* shared) {
  return guarded([&] {
    const slipstream::TensorView& v = view_of(view);
    flag_out(v.shared(), &deref(shared, "shared output pointer"));
  });
}

slipstream_status_t slipstream_client_stats(const slipstream_client_t* client,
                                            slipstream_client_stats_t* stats) {
  return guarded([&] {
    const slipstream::ClientStats s = deref(client, "client handle").client.stats();
    slipstream_client_stats_t& out = deref(stats, "stats output pointer");
    out.shared_memory = s.shared_memory ? 1 : 0;
    out.shm_puts = s.shm_puts;
    out.shm_loan_puts = s.shm_loan_puts;
    out.shm_gets = s.shm_gets;
    out.shm_views = s.shm_views;
    out.socket_puts = s.socket_puts;
    out.socket_gets = s.socket_gets;
    out.fallbacks = s.fallbacks;
  });
}

}  // extern "C"

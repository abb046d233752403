// slipstream.TensorLoan: memory to fill through numpy arrays and store with Client.put_tensor
// without a copy (the C++ TensorLoan). The arrays are counted, so that a put never unmaps memory
// that a live array still points at.
#include <limits>
#include <string>
#include <utility>

#include "bindings.hpp"

namespace slipstream::python {

namespace {

// A new writable C-ordered array over the loan's memory. Its base is a capsule holding the state
// (which keeps the memory mapped while the array, or any view of it, lives) and counting it.
py::array loan_array(const std::shared_ptr<LoanState>& state) {
  if (state->committed) {
    throw InvalidArgumentError(
        "the loan has been stored by put_tensor: its memory belongs to the server now");
  }
  auto holder = std::make_unique<std::shared_ptr<LoanState>>(state);
  py::capsule base(holder.get(), [](void* pointer) {
    auto* held = static_cast<std::shared_ptr<LoanState>*>(pointer);
    --(*held)->arrays;
    delete held;
  });
  holder.release();  // the capsule owns it now
  ++state->arrays;
  std::vector<py::ssize_t> shape(state->shape.begin(), state->shape.end());
  return py::array(numpy_dtype(state->dtype), shape, state->loan.bytes().data(), base);
}

}  // namespace

std::shared_ptr<LoanState> make_loan(Client& client, std::vector<std::int64_t> shape, DType dtype) {
  const std::size_t count = element_count(shape);  // throws for a bad dimension or an overflow
  const std::size_t size = dtype_size(dtype);
  if (count > std::numeric_limits<std::size_t>::max() / size) {
    throw InvalidArgumentError("a loan of " + std::to_string(count) + " elements is too large");
  }
  auto state = std::make_shared<LoanState>();
  state->dtype = dtype;
  state->shape = std::move(shape);
  state->loan = call_without_gil([&] { return client.loan(count * size); });
  return state;
}

TensorLoan take_loan_for_put(LoanState& state) {
  if (state.committed) {
    throw InvalidArgumentError(
        "put tensor: this loan has already been stored (a loan is stored "
        "once; take a new one with Client.loan)");
  }
  if (state.arrays > 0) {
    throw py::buffer_error(
        "put tensor: " + std::to_string(state.arrays) +
        " numpy array(s) over the loan's memory are still alive (a variable holding "
        "loan.array, or a view of it); delete them first: the put hands the memory to the "
        "server and unmaps it");
  }
  state.committed = true;
  return std::move(state.loan);
}

void bind_loan(py::module_& module) {
  py::class_<LoanState, std::shared_ptr<LoanState>>(module, "TensorLoan", R"doc(
Memory for one tensor, from Client.loan(shape, dtype): fill it through `loan.array` and store it
with Client.put_tensor(name, loan). Over a Unix socket with the server's shared memory on, the
memory is the server's: the put stores it without a copy (and the server seals it). Otherwise it
is private memory sent on the socket by the put, so code using loans works everywhere.

The put consumes the loan: afterwards `loan.array` and another put raise InvalidArgumentError.
Because the put unmaps the memory, it raises BufferError while any numpy array over it (a
variable holding `loan.array`, or a view of one) is alive; delete those first. A loan that is
never stored is given back when it and its arrays are garbage-collected.
)doc")
      .def_property_readonly("array", &loan_array, R"doc(
A new writable C-ordered numpy array of the loan's shape and dtype over its memory (every access
makes a new array object over the same memory). Raises InvalidArgumentError once stored.
)doc")
      .def_property_readonly(
          "shape",
          [](const LoanState& s) {
            py::tuple shape(s.shape.size());
            for (std::size_t i = 0; i < s.shape.size(); ++i) shape[i] = s.shape[i];
            return shape;
          },
          "The shape the loan was made for (and is stored with).")
      .def_property_readonly(
          "dtype", [](const LoanState& s) { return numpy_dtype(s.dtype); },
          "The numpy dtype the loan was made for (and is stored with).")
      .def_property_readonly(
          "nbytes", [](const LoanState& s) { return element_count(s.shape) * dtype_size(s.dtype); },
          "Its size in bytes.")
      .def_property_readonly(
          "shared", [](const LoanState& s) { return s.loan.shared(); },
          "True when the memory is the server's shared memory (the put will not copy it); False "
          "for private memory, and once stored.")
      .def_property_readonly(
          "stored", [](const LoanState& s) { return s.committed; },
          "True once put_tensor has consumed the loan.")
      .def("__repr__", [](const LoanState& s) {
        std::string text = "<slipstream.TensorLoan " + std::string(dtype_name(s.dtype)) + " (";
        for (std::size_t i = 0; i < s.shape.size(); ++i) {
          text += (i > 0 ? ", " : "") + std::to_string(s.shape[i]);
        }
        if (s.shape.size() == 1) text += ",";
        return text + ")" + (s.committed ? " stored>" : s.loan.shared() ? " shared>" : ">");
      });
}

}  // namespace slipstream::python

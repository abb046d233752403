// Internal to slipstream._slipstream: the bind_* function of each source file (one per class) and
// the numpy conversions that Client and Dataset share.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "slipstream/client.hpp"
#include "slipstream/reply.hpp"
#include "slipstream/tensor_data.hpp"

namespace slipstream::python {

namespace py = pybind11;

void bind_errors(py::module_& module);      // errors.cpp: exception hierarchy and translator
void bind_tensor(py::module_& module);      // tensor.cpp: DType and dtype helpers
void bind_dataset(py::module_& module);     // dataset.cpp: Dataset
void bind_model_info(py::module_& module);  // model_info.cpp: ModelInfo
void bind_client(py::module_& module);      // client.cpp: Client
void bind_loan(py::module_& module);        // loan.cpp: TensorLoan
// stream_writer.cpp: StreamWriter; stream_reader.cpp: StreamReader and the steps it hands out.
void bind_stream_writer(py::module_& module);
void bind_stream_reader(py::module_& module);
void bind_replay(py::module_& module);        // replay.cpp: ReplayMemory

/// Runs `call()` with the GIL released and returns its result (or throws its exception) with the
/// GIL held again. Use this, not py::gil_scoped_release, around blocking calls: a daemon thread
/// whose call returns while the interpreter is exiting is ended by CPython with pthread_exit when
/// it takes the GIL back, and that forced unwinding must not pass through a destructor (noexcept:
/// it would abort the whole process, "terminate called without an active exception"). Here the
/// GIL is taken back in plain code, with no exception in flight, so the unwinding goes up through
/// pybind11 (which lets it pass) and the thread ends quietly, as the interpreter means it to.
template <typename Call>
auto call_without_gil(Call&& call) -> decltype(call()) {
  using Result = decltype(call());
  PyThreadState* state = PyEval_SaveThread();
  std::exception_ptr error;
  if constexpr (std::is_void_v<Result>) {
    try {
      call();
    } catch (...) {
      error = std::current_exception();
    }
    PyEval_RestoreThread(state);
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<Result> result;
    try {
      result.emplace(call());
    } catch (...) {
      error = std::current_exception();
    }
    PyEval_RestoreThread(state);
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }
}

/// For destructors, which cannot let the unwinding of call_without_gil through: the GIL released
/// for the scope; another thread that finds the interpreter exiting when the scope ends parks
/// until the process exits instead of taking the GIL back. The thread that runs the exit (whose
/// objects are destroyed during it: a reader or writer still alive when the program ends) takes
/// the GIL back as always.
class ReleasedGil {
 public:
  ReleasedGil() : state_(PyEval_SaveThread()) {}
  ~ReleasedGil() {
    if (finalizing() && !on_exiting_thread()) pause_forever();
    PyEval_RestoreThread(state_);
  }
  ReleasedGil(const ReleasedGil&) = delete;
  ReleasedGil& operator=(const ReleasedGil&) = delete;

  /// Registered with `atexit` at import: atexit handlers run on the thread that runs the exit,
  /// before the interpreter counts as finalizing.
  static void note_exiting_thread() noexcept;

 private:
  static bool on_exiting_thread() noexcept;
  static bool finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
  }
  [[noreturn]] static void pause_forever() noexcept;
  PyThreadState* state_;
};

/// A caller's value readied for a put, built with the GIL held. `array` is a numpy array of a
/// supported dtype in native byte order that is C- or Fortran-contiguous: a numpy array is used as
/// it is when it already qualifies (no copy), anything else (torch tensors, objects with
/// __dlpack__ or __array_interface__, nested lists) goes through slipstream._convert.to_numpy, and
/// a non-contiguous or byte-swapped array is copied once. `data` borrows from `array`, so it stays
/// valid while this object lives; destroy it with the GIL held.
struct ArrayInput {
  py::array array;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  MemoryOrder order = MemoryOrder::kC;
  const void* data = nullptr;
  std::size_t bytes = 0;
};

/// Throws TypeError for a dtype Slipstream cannot store (e.g. float16, uint32, complex, object).
ArrayInput array_input(py::handle value);

/// A writable array for unpack_tensor: must be a numpy array, writable, C- or Fortran-contiguous.
/// Throws TypeError / ValueError otherwise.
ArrayInput output_array(py::handle value);

/// A compression operator from Python: "type" or (type, {parameter: value}) (stream_writer.cpp).
/// Throws InvalidArgumentError naming `what` for anything else.
CompressionOperator compression_operator(const py::handle& spec, const std::string& what);

/// The DType of a numpy dtype; throws TypeError if there is none.
DType dtype_of_numpy(const py::dtype& dtype);
/// The numpy dtype of a DType.
py::dtype numpy_dtype(DType dtype);

/// Hands a received tensor to numpy without copying its bytes: the Tensor moves to the heap and a
/// capsule that deletes it becomes the array's base object. The array is writable and C-ordered.
py::array array_from_tensor(Tensor tensor);

/// A read-only numpy view of a tensor owned by `owner` (whose lifetime the view extends).
py::array array_view(const Tensor& tensor, py::handle owner);

// ---- Loans (loan.cpp) -------------------------------------------------------------------------

/// What a slipstream.TensorLoan holds: the C++ loan with the dtype and shape it was made for, and
/// how many numpy arrays over its memory are alive. Touched only with the GIL held.
struct LoanState {
  TensorLoan loan;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::size_t arrays = 0;  // numpy arrays (with their views) over the memory, alive
  bool committed = false;  // stored by put_tensor (the loan is then empty)
};

/// A loan of `shape` elements of `dtype` from `client` (Client::loan, GIL released). Throws
/// InvalidArgumentError for a bad shape or a size that overflows.
std::shared_ptr<LoanState> make_loan(Client& client, std::vector<std::int64_t> shape, DType dtype);

/// Takes the loan out of `state` for Client::put_tensor, which consumes it. Throws
/// InvalidArgumentError if it was stored before, and BufferError (leaving it untouched) while a
/// numpy array over its memory is alive: the put unmaps that memory, so the array would point at
/// nothing.
TensorLoan take_loan_for_put(LoanState& state);

/// A server reply as Python values (reply.cpp): bulk strings -> bytes, status -> str, integers
/// -> int, bool -> bool, doubles -> float, big numbers -> int, nil -> None, arrays/sets/pushes ->
/// list, maps -> dict, and an error nested in an array -> a ServerError instance (not raised).
py::object reply_to_python(const Reply& reply);

/// Text for Python from bytes that should be UTF-8 (server messages may quote binary keys):
/// invalid sequences become U+FFFD instead of raising.
py::str lossy_str(std::string_view text);

// ---- Streams (stream_writer.cpp, stream_reader.cpp) -------------------------------------------

/// The connection settings of a stream writer or reader: the address and timeouts that
/// slipstream.Client takes (an empty address: SLIPSTREAM_ADDRESS, then SSDB).
ClientOptions stream_client_options(const std::optional<std::string>& address,
                                    std::optional<std::string> password,
                                    std::int64_t connect_timeout_ms,
                                    std::int64_t command_timeout_ms);

/// A rank or count argument as uint32; throws InvalidArgumentError naming `what` when out of range.
std::uint32_t stream_rank_argument(std::int64_t value, std::string_view what);
/// A timeout in milliseconds (0: no limit); throws InvalidArgumentError when negative.
std::chrono::milliseconds stream_duration_argument(std::int64_t value, std::string_view what);

/// Runs `call()` with the GIL released and `mutex` held, taken in that order: a thread waiting for
/// the mutex while holding the GIL would stop every Python thread for as long as the holder's call
/// waits (a next_step can wait for minutes). `call` must not touch Python objects. A stream writer
/// or reader is meant for one thread at a time; the mutex turns calls from several threads into
/// calls that take turns instead of a data race.
template <typename Call>
auto locked_without_gil(std::mutex& mutex, Call&& call) {
  return call_without_gil([&] {
    std::lock_guard<std::mutex> lock(mutex);
    return call();
  });
}

}  // namespace slipstream::python

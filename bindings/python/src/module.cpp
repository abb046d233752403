// slipstream._slipstream: the compiled half of the `slipstream` Python package. The pure-Python
// half (slipstream/__init__.py, _convert.py) re-exports these names and converts torch objects.
#include "bindings.hpp"

#include <unistd.h>

#include <atomic>

#ifndef SLIPSTREAM_VERSION
#error "SLIPSTREAM_VERSION must be defined by the build"
#endif

namespace {
std::atomic<unsigned long> exiting_thread{0};  // PyThread_get_thread_ident() of the exit's thread
}

[[noreturn]] void slipstream::python::ReleasedGil::pause_forever() noexcept {
  for (;;) pause();  // no signal handler of ours returns here: the process is exiting
}

void slipstream::python::ReleasedGil::note_exiting_thread() noexcept {
  exiting_thread.store(PyThread_get_thread_ident());
}

bool slipstream::python::ReleasedGil::on_exiting_thread() noexcept {
  return exiting_thread.load() == PyThread_get_thread_ident();
}

PYBIND11_MODULE(_slipstream, module) {
  namespace python = slipstream::python;
  module.doc() = "Slipstream client (compiled part; import `slipstream` instead).";
  python::bind_errors(module);  // first: the other bindings raise these
  python::bind_tensor(module);
  python::bind_dataset(module);
  python::bind_model_info(module);
  python::bind_loan(module);  // before Client, whose signatures name it
  python::bind_client(module);
  python::bind_stream_writer(module);
  python::bind_stream_reader(module);
  python::bind_replay(module);
  module.attr("__version__") = SLIPSTREAM_VERSION;
  pybind11::module_::import("atexit").attr("register")(
      pybind11::cpp_function([] { python::ReleasedGil::note_exiting_thread(); }));
}

// slipstream._slipstream: the compiled half of the `slipstream` Python package. The pure-Python
// half (slipstream/__init__.py, _convert.py) re-exports these names and converts torch objects.
#include "bindings.hpp"

#include <unistd.h>

#ifndef SLIPSTREAM_VERSION
#error "SLIPSTREAM_VERSION must be defined by the build"
#endif

[[noreturn]] void slipstream::python::ReleasedGil::pause_forever() noexcept {
  for (;;) pause();  // no signal handler of ours returns here: the process is exiting
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
}

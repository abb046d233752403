// openPMD-api's Series: opening (optionally with an mpi4py-like communicator), root attributes,
// flush and close, and its iterations: iterations, write_/read_iterations(), snapshots().
#include <optional>
#include <string>
#include <utility>

#include "openpmd_bindings.hpp"

namespace openpmd_python {

using openPMD::Access;
using openPMD::IndexedIteration;
using openPMD::Iteration;
using openPMD::IterationEncoding;
using openPMD::ReadIterations;
using openPMD::Series;
using openPMD::Snapshots;
using openPMD::WriteIterations;

namespace {

// The objects below hold a copy of their Series (so the series stays open while they live) and
// are deleted with the GIL released, as the Series itself (see DeleteWithoutGil).

struct WriteIterationsView {
  Series series;
  WriteIterations iterations;
};

struct ReadIterationsView {
  Series series;
  ReadIterations iterations;
};

struct ReadIterator {
  Series series;
  ReadIterations iterations;
  std::optional<ReadIterations::iterator> position;  // empty until the first __next__
  bool done = false;
};

struct SnapshotsView {
  Series series;
  Snapshots snapshots;
};

enum class Yield { kKeys, kValues, kItems };

struct SnapshotsIterator {
  Series series;
  Snapshots snapshots;
  Yield yield;
  std::optional<Snapshots::iterator> position;
  bool done = false;
};

std::string path_text(py::handle path) {
  return py::module_::import("os").attr("fspath")(path).cast<std::string>();
}

// Options as text: a str as it is, a path-like as "@path", anything else (a dict) as JSON.
std::string options_text(py::handle options) {
  if (py::isinstance<py::str>(options)) return options.cast<std::string>();
  if (py::hasattr(options, "__fspath__")) return "@" + path_text(options);
  return py::module_::import("json").attr("dumps")(options).cast<std::string>();
}

bool is_communicator(py::handle value) {
  return !value.is_none() && py::hasattr(value, "Get_rank") && py::hasattr(value, "Get_size");
}

// Series(filepath, access, options) or, with `comm` (anything with Get_rank(), Get_size() and,
// for get_rank_table(collective=True), allgather(), as mpi4py's communicators), one rank of it.
std::shared_ptr<Series> open_series(py::handle filepath, Access access, py::handle options,
                                    py::handle comm) {
  const std::string path = path_text(filepath);
  const std::string config = options_text(options);
  int rank = 0;
  int size = 1;
  Series::Allgather allgather;
  if (!comm.is_none()) {
    rank = comm.attr("Get_rank")().cast<int>();
    size = comm.attr("Get_size")().cast<int>();
    auto reference =
        std::make_shared<PythonReference>(py::reinterpret_borrow<py::object>(comm));
    allgather = [reference](const std::string& mine) {
      std::vector<std::string> all;
      std::string failure;
      PyGILState_STATE state = PyGILState_Ensure();
      try {
        py::handle communicator(reference->get());
        all = communicator.attr("allgather")(py::str(mine)).cast<std::vector<std::string>>();
      } catch (const std::exception& e) {
        failure = e.what();
        if (failure.empty()) failure = "unknown error";
      }
      PyGILState_Release(state);
      if (!failure.empty()) {
        throw std::runtime_error("allgather over the series' communicator: " + failure);
      }
      return all;
    };
  }
  return call_without_gil([&] {
    return std::shared_ptr<Series>(new Series(path, access, config, rank, size, allgather),
                                   DeleteWithoutGil{});
  });
}

template <typename T>
std::shared_ptr<T> held(T value) {
  return std::shared_ptr<T>(new T(std::move(value)), DeleteWithoutGil{});
}

}  // namespace

void bind_series(py::module_& module) {
  bind_container<openPMD::Container<Iteration, std::uint64_t>, openPMD::Attributable>(
      module, "Iteration_Container");

  Class<WriteIterationsView>(module, "WriteIterations",
                             "Iterations written one after the other: asking for a new index "
                             "closes the previous iteration.")
      .def(
          "__getitem__",
          [](py::object self, std::uint64_t index) {
            WriteIterationsView& view = self.cast<WriteIterationsView&>();
            Iteration iteration = call_without_gil([&] { return Iteration(view.iterations[index]); });
            return tied(std::move(iteration), self);
          },
          py::arg("index"))
      .def(
          "current_iteration",
          [](py::object self) -> py::object {
            std::optional<IndexedIteration> current =
                self.cast<WriteIterationsView&>().iterations.currentIteration();
            if (!current) return py::none();
            return tied(std::move(*current), self);
          },
          "The iteration being written, or None.");

  Class<ReadIterator>(module, "SeriesIterator")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", [](py::object self) {
        ReadIterator& reader = self.cast<ReadIterator&>();
        if (reader.done) throw py::stop_iteration();
        if (!reader.position) {
          // The first step: on a stream this waits for the writers.
          reader.position.emplace(call_without_gil([&] { return reader.iterations.begin(); }));
        } else {
          // Closes the iteration handed out last, then waits for the next.
          call_without_gil([&] { ++*reader.position; });
        }
        if (*reader.position == ReadIterations::iterator()) {
          reader.done = true;
          throw py::stop_iteration();
        }
        return tied(IndexedIteration(**reader.position), self);
      });

  Class<ReadIterationsView>(module, "ReadIterations",
                            "The iterations in order, each closed when the loop moves on (on a "
                            "stream, the next step is waited for).")
      .def("__iter__", [](py::object self) {
        ReadIterationsView& view = self.cast<ReadIterationsView&>();
        return tied(held(ReadIterator{view.series, view.iterations, std::nullopt, false}), self);
      });

  Class<SnapshotsIterator>(module, "SnapshotsIterator")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", [](py::object self) -> py::object {
        SnapshotsIterator& it = self.cast<SnapshotsIterator&>();
        if (it.done) throw py::stop_iteration();
        if (!it.position) {
          it.position.emplace(call_without_gil([&] { return it.snapshots.begin(); }));
        } else {
          call_without_gil([&] { ++*it.position; });
        }
        if (*it.position == Snapshots::iterator()) {
          it.done = true;
          throw py::stop_iteration();
        }
        auto& [index, iteration] = **it.position;
        switch (it.yield) {
          case Yield::kKeys:
            return py::int_(index);
          case Yield::kValues:
            return tied(iteration, self);
          case Yield::kItems:
            return py::make_tuple(py::int_(index), tied(iteration, self));
        }
        return py::none();
      });

  auto snapshots_iterator = [](py::object self, Yield yield) {
    SnapshotsView& view = self.cast<SnapshotsView&>();
    return tied(held(SnapshotsIterator{view.series, view.snapshots, yield, std::nullopt, false}),
                self);
  };
  Class<SnapshotsView>(module, "Snapshots",
                       "openPMD-api 0.16's view of the iterations: written one after the other, "
                       "read in order (streams, read_linear) or by index (files).")
      .def(
          "__getitem__",
          [](py::object self, std::uint64_t index) {
            SnapshotsView& view = self.cast<SnapshotsView&>();
            Iteration iteration = call_without_gil([&] { return Iteration(view.snapshots[index]); });
            return tied(std::move(iteration), self);
          },
          py::arg("index"))
      .def("__len__", [](const SnapshotsView& view) { return view.snapshots.size(); })
      .def(
          "__contains__",
          [](const SnapshotsView& view, py::handle index) {
            try {
              return view.snapshots.contains(index.cast<std::uint64_t>());
            } catch (const py::cast_error&) {
              return false;
            }
          },
          py::arg("index"))
      .def("__iter__", [snapshots_iterator](py::object self) {
        return snapshots_iterator(self, Yield::kKeys);
      })
      .def("keys", [snapshots_iterator](py::object self) {
        return snapshots_iterator(self, Yield::kKeys);
      })
      .def("values", [snapshots_iterator](py::object self) {
        return snapshots_iterator(self, Yield::kValues);
      })
      .def("items", [snapshots_iterator](py::object self) {
        return snapshots_iterator(self, Yield::kItems);
      })
      .def("current_iteration", [](py::object self) -> py::object {
        SnapshotsView& view = self.cast<SnapshotsView&>();
        std::optional<IndexedIteration> current;
        try {
          current = view.series.writeIterations().currentIteration();
        } catch (const openPMD::error::WrongAPIUsage&) {
          return py::none();  // a series read
        }
        if (!current) return py::none();
        return tied(std::move(*current), self);
      });

  Class<Series, openPMD::Attributable> series(module, "Series",
                                              "The root of an openPMD series: a Slipstream "
                                              "stream (.sst, .ssc, .slip) or HDF5 files (.h5).");
  series
      .def(py::init([](py::handle filepath, Access access, py::handle options) {
             if (is_communicator(options)) {
               return open_series(filepath, access, py::str("{}"), options);
             }
             return open_series(filepath, access, options, py::none());
           }),
           py::arg("filepath"), py::arg("access"), py::arg("options") = "{}",
           "Opens `filepath` (str or path) with `access`; `options` is JSON or TOML text, a "
           "dict, or a path to a file of either (openPMD-api's backend configuration; "
           "{\"slipstream\": {\"address\": ...}} names the server).")
      .def(py::init([](py::handle filepath, Access access, py::handle comm, py::handle options) {
             if (!is_communicator(comm)) {
               throw py::type_error("Series: the communicator must have Get_rank() and "
                                    "Get_size() (an mpi4py communicator)");
             }
             return open_series(filepath, access, options, comm);
           }),
           py::arg("filepath"), py::arg("access"), py::arg("mpi_communicator"),
           py::arg("options") = "{}",
           "One rank of a parallel series: `mpi_communicator` is an mpi4py communicator (or any "
           "object with Get_rank(), Get_size() and allgather()).")
      .def("__bool__", [](const Series& s) { return static_cast<bool>(s); })
      .def("__len__", [](const Series& s) { return s.iterations.size(); })
      .def("__repr__",
           [](const Series& s) {
             if (!s) return std::string("<openPMD.Series (closed)>");
             return "<openPMD.Series at '" + s.myPath().filePath() + "' with " +
                    std::to_string(s.iterations.size()) + " iteration(s) and " +
                    std::to_string(s.numAttributes()) + " attributes>";
           })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__",
           [](Series& s, py::args) {
             call_without_gil([&] {
               s.close();
               Series closed;
               std::swap(s, closed);
             });
             return false;
           })
      .def(
          "close",
          [](Series& s) {
            call_without_gil([&] {
              s.close();
              Series closed;  // the series evaluates to False from now on
              std::swap(s, closed);
            });
          },
          "Closes the open iterations and the series (a stream's writer ends the stream, a "
          "reader leaves it).")
      .def(
          "flush",
          [](Series& s, const std::string& config) { call_without_gil([&] { s.flush(config); }); },
          py::arg("backend_config") = "{}",
          "Does every queued store and load of the open iterations.")
      .def("parse_base", [](Series& s) { call_without_gil([&] { s.parseBase(); }); })
      .def_property_readonly(
          "iterations",
          [](py::object self) { return tied(self.cast<Series&>().iterations, self); },
          "The iterations by index (random access to files; on a stream, the step held).")
      .def("write_iterations",
           [](py::object self) {
             Series& s = self.cast<Series&>();
             return tied(held(WriteIterationsView{s, s.writeIterations()}), self);
           })
      .def("read_iterations",
           [](py::object self) {
             Series& s = self.cast<Series&>();
             return tied(held(ReadIterationsView{s, s.readIterations()}), self);
           })
      .def("snapshots",
           [](py::object self) {
             Series& s = self.cast<Series&>();
             return tied(held(SnapshotsView{s, s.snapshots()}), self);
           })
      .def(
          "get_rank_table",
          [](Series& s, bool collective) {
            return call_without_gil([&] { return s.rankTable(collective); });
          },
          py::arg("collective") = false)
      .def(
          "set_rank_table",
          [](py::object self, const std::string& info) {
            self.cast<Series&>().setRankTable(info);
            return self;
          },
          py::arg("my_rank_info"))
      .def_property("openPMD", &Series::openPMD,
                    [](Series& s, const std::string& value) { s.setOpenPMD(value); })
      .def_property("openPMD_extension", &Series::openPMDextension,
                    [](Series& s, std::uint32_t value) { s.setOpenPMDextension(value); })
      .def_property("base_path", &Series::basePath,
                    [](Series& s, const std::string& value) { s.setBasePath(value); })
      .def_property("meshes_path", &Series::meshesPath,
                    [](Series& s, const std::string& value) { s.setMeshesPath(value); })
      .def_property("particles_path", &Series::particlesPath,
                    [](Series& s, const std::string& value) { s.setParticlesPath(value); })
      .def_property("author", &Series::author,
                    [](Series& s, const std::string& value) { s.setAuthor(value); })
      .def_property("date", &Series::date,
                    [](Series& s, const std::string& value) { s.setDate(value); })
      .def_property("machine", &Series::machine,
                    [](Series& s, const std::string& value) { s.setMachine(value); })
      .def_property(
          "software_dependencies", &Series::softwareDependencies,
          [](Series& s, const std::string& value) { s.setSoftwareDependencies(value); })
      .def_property("iteration_encoding", &Series::iterationEncoding,
                    [](Series& s, IterationEncoding value) { s.setIterationEncoding(value); })
      .def_property("iteration_format", &Series::iterationFormat,
                    [](Series& s, const std::string& value) { s.setIterationFormat(value); })
      .def_property("name", &Series::name,
                    [](Series& s, const std::string& value) { s.setName(value); })
      .def_property_readonly("software", &Series::software)
      .def_property_readonly("software_version", &Series::softwareVersion)
      .def_property_readonly("backend", &Series::backend)
      .def(
          "set_software",
          [](py::object self, const std::string& name, const std::string& version) {
            self.cast<Series&>().setSoftware(name, version);
            return self;
          },
          py::arg("name"), py::arg("version") = "unspecified")
      .def(
          "set_author",
          [](py::object self, const std::string& value) {
            self.cast<Series&>().setAuthor(value);
            return self;
          },
          py::arg("author"))
      .def(
          "set_date",
          [](py::object self, const std::string& value) {
            self.cast<Series&>().setDate(value);
            return self;
          },
          py::arg("date"))
      .def(
          "set_iteration_encoding",
          [](py::object self, IterationEncoding value) {
            self.cast<Series&>().setIterationEncoding(value);
            return self;
          },
          py::arg("iteration_encoding"))
      .def(
          "set_iteration_format",
          [](py::object self, const std::string& value) {
            self.cast<Series&>().setIterationFormat(value);
            return self;
          },
          py::arg("iteration_format"))
      .def(
          "set_meshes_path",
          [](py::object self, const std::string& value) {
            self.cast<Series&>().setMeshesPath(value);
            return self;
          },
          py::arg("meshes_path"))
      .def(
          "set_particles_path",
          [](py::object self, const std::string& value) {
            self.cast<Series&>().setParticlesPath(value);
            return self;
          },
          py::arg("particles_path"));
}

}  // namespace openpmd_python

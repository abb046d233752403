// openPMD-api's record components (Record_, Mesh_Record_, Patch_Record_Component): numpy stores
// and loads (store_chunk, its span form, load_chunk, rc[...]), constants, available_chunks.
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <variant>

#include "openpmd_bindings.hpp"

namespace openpmd_python {

using openPMD::BaseRecordComponent;
using openPMD::ChunkInfo;
using openPMD::Extent;
using openPMD::MeshRecordComponent;
using openPMD::Offset;
using openPMD::PatchRecordComponent;
using openPMD::RecordComponent;
using openPMD::WrittenChunkInfo;

namespace {

py::module_ numpy() { return py::module_::import("numpy"); }

std::string extent_text(const std::vector<std::uint64_t>& extent) {
  std::string text = "[";
  for (std::size_t d = 0; d < extent.size(); ++d) {
    text += (d ? ", " : "") + std::to_string(extent[d]);
  }
  return text + "]";
}

std::string shape_text(const py::array& array) {
  std::string text = "(";
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    text += (d ? ", " : "") + std::to_string(array.shape(d));
  }
  return text + (array.ndim() == 1 ? ",)" : ")");
}

// The C++ element type for a component of `component` and data of `data`: the component's own
// when both name one representation (CHAR written by C++, read or stored as int8).
Datatype element_datatype(Datatype component, Datatype data) {
  const Datatype plain_char = std::is_signed_v<char> ? Datatype::SCHAR : Datatype::UCHAR;
  if (component == Datatype::CHAR && data == plain_char) return Datatype::CHAR;
  return data;
}

// A selection of a component (rc[...]): the box, and the axes given as single indices, which
// the numpy array of the selection leaves out as numpy does.
struct Selection {
  Offset offset;
  Extent extent;
  std::vector<bool> flattened;

  std::vector<py::ssize_t> shape() const {
    std::vector<py::ssize_t> out;
    for (std::size_t d = 0; d < extent.size(); ++d) {
      if (!flattened[d]) out.push_back(static_cast<py::ssize_t>(extent[d]));
    }
    return out;
  }
};

// `key` as numpy reads it: () or ... for everything, slices (step 1; negative and omitted bounds
// as numpy), integers (negative from the end), at most one Ellipsis standing for the axes not
// given.
Selection parse_selection(const Extent& global, py::handle key) {
  py::tuple items = py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key)
                                                   : py::make_tuple(key);
  const std::size_t ndim = global.size();
  std::size_t given = 0;
  int ellipses = 0;
  for (py::handle item : items) {
    if (item.ptr() == Py_Ellipsis) {
      ++ellipses;
    } else {
      ++given;
    }
  }
  if (ellipses > 1) throw py::index_error("an index can only have a single ellipsis ('...')");
  if (given > ndim) {
    throw py::index_error("too many indices (" + std::to_string(given) +
                          ") for a record component of " + std::to_string(ndim) + " dimensions");
  }
  Selection selection{Offset(ndim, 0), global, std::vector<bool>(ndim, false)};
  std::size_t axis = 0;
  for (py::handle item : items) {
    if (item.ptr() == Py_Ellipsis) {
      axis += ndim - given;
      continue;
    }
    const auto size = static_cast<Py_ssize_t>(global[axis]);
    if (PySlice_Check(item.ptr())) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      if (step != 1) {
        throw py::index_error("slices with a step other than 1 are not supported (axis " +
                              std::to_string(axis) + ")");
      }
      const Py_ssize_t length = PySlice_AdjustIndices(size, &start, &stop, step);
      selection.offset[axis] = static_cast<std::uint64_t>(start);
      selection.extent[axis] = static_cast<std::uint64_t>(length);
    } else if (item.is_none()) {
      throw py::index_error("None (numpy.newaxis) is not supported in a record component index");
    } else if (PyIndex_Check(item.ptr()) && !py::isinstance<py::bool_>(item)) {
      Py_ssize_t index = PyNumber_AsSsize_t(item.ptr(), PyExc_IndexError);
      if (index == -1 && PyErr_Occurred()) throw py::error_already_set();
      if (index < 0) index += size;
      if (index < 0 || index >= size) {
        throw py::index_error("index " + std::string(py::str(item)) +
                              " is out of bounds for axis " + std::to_string(axis) +
                              " with size " + std::to_string(size));
      }
      selection.offset[axis] = static_cast<std::uint64_t>(index);
      selection.extent[axis] = 1;
      selection.flattened[axis] = true;
    } else {
      throw py::index_error("unsupported index " + std::string(py::repr(item)) +
                            " (record components take integers, slices and ...)");
    }
    ++axis;
  }
  return selection;
}

// A store's offset: None (or [0], openPMD-api's default) for the origin.
Offset offset_argument(py::handle offset, std::size_t ndim) {
  if (offset.is_none()) return Offset(ndim, 0);
  Offset out = offset.cast<Offset>();
  if (out.size() == 1 && out[0] == 0 && ndim != 1) return Offset(ndim, 0);
  return out;
}

// An extent: None (or [-1], openPMD-api's default) for `fallback`.
Extent extent_argument(py::handle extent, const Extent& fallback) {
  if (extent.is_none()) return fallback;
  if (py::len(extent) == 1) {
    py::handle first = py::reinterpret_borrow<py::sequence>(extent)[0];
    if (py::isinstance<py::int_>(first) && first.cast<long long>() == -1) return fallback;
  }
  return extent.cast<Extent>();
}

// From `offset` to the end of the component in every dimension.
Extent rest_of(const RecordComponent& component, const Offset& offset) {
  Extent global = component.getExtent();
  for (std::size_t d = 0; d < global.size() && d < offset.size(); ++d) {
    global[d] = offset[d] <= global[d] ? global[d] - offset[d] : 0;
  }
  return global;
}

// `data` as a C-contiguous numpy array in native byte order (copied only when it is not one):
// arrays keep their dtype; other objects (lists) take the component's.
py::array store_array(const RecordComponent& component, py::handle data) {
  py::array array;
  if (py::isinstance<py::array>(data)) {
    array = py::reinterpret_borrow<py::array>(data);
  } else {
    const Datatype dtype = component.getDatatype();
    array = dtype == Datatype::UNDEFINED ? numpy().attr("asarray")(data)
                                         : numpy().attr("asarray")(data, numpy_of_datatype(dtype));
  }
  if (!array.dtype().attr("isnative").cast<bool>()) {
    array = array.attr("astype")(array.dtype().attr("newbyteorder")("="));
  }
  if (!(array.flags() & py::array::c_style)) array = numpy().attr("ascontiguousarray")(array);
  return array;
}

// Queues the store of `array` (kept alive until the layer is done with it) to the box.
void store(RecordComponent& component, const py::array& array, Offset offset, Extent extent) {
  const std::uint64_t elements = RecordComponent::elementCount(extent);
  if (static_cast<std::uint64_t>(array.size()) != elements) {
    throw py::index_error("store_chunk of " + describe(component) + ": an array of shape " +
                          shape_text(array) + " (" + std::to_string(array.size()) +
                          " elements) for a chunk of extent " + extent_text(extent) + " (" +
                          std::to_string(elements) + " elements)");
  }
  const Datatype dtype =
      element_datatype(component.getDatatype(), datatype_of_numpy(array.dtype()));
  void* data = const_cast<void*>(array.data());
  with_element_type(dtype, [&]<typename T>() {
    component.storeChunk(keeping_alive<T>(data, array), std::move(offset), std::move(extent));
  });
}

// store_chunk(data, offset, extent): `data` as an array of the component's type, to the box at
// `offset` (default: the origin) of `extent` (default: the array's shape).
void store_whole(RecordComponent& component, py::handle data, py::object offset,
                 py::object extent) {
  py::array array = store_array(component, data);
  Offset box_offset = offset_argument(offset, component.getDimensionality());
  std::vector<std::uint64_t> shape;
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    shape.push_back(static_cast<std::uint64_t>(array.shape(d)));
  }
  store(component, array, std::move(box_offset), extent_argument(extent, shape));
}

// Queues the load of the box into `array` (kept alive until the flush fills it).
void load_into(RecordComponent& component, py::array& array, Offset offset, Extent extent) {
  const Datatype dtype = component.getDatatype();
  if (dtype == Datatype::UNDEFINED) {
    throw openPMD::error::WrongAPIUsage("load_chunk of " + describe(component) +
                                        ": the component has no dataset");
  }
  void* data = array.mutable_data();
  with_element_type(dtype, [&]<typename T>() {
    component.loadChunk(keeping_alive<T>(data, array), std::move(offset), std::move(extent));
  });
}

// A new array of the component's dtype and `shape`, filled with the box at the next flush.
py::array load(RecordComponent& component, Offset offset, Extent extent,
               const std::vector<py::ssize_t>& shape) {
  const Datatype dtype = component.getDatatype();
  if (dtype == Datatype::UNDEFINED) {
    throw openPMD::error::WrongAPIUsage("load_chunk of " + describe(component) +
                                        ": the component has no dataset");
  }
  py::array array(numpy_of_datatype(dtype), shape);
  load_into(component, array, std::move(offset), std::move(extent));
  return array;
}

std::vector<py::ssize_t> shape_of(const Extent& extent) {
  return std::vector<py::ssize_t>(extent.begin(), extent.end());
}

// The span form's buffer: the layer's (or a stream's shared) memory for the chunk, filled in
// place before the next flush. current_buffer() is a numpy array over it that keeps this alive.
struct SpanView {
  std::shared_ptr<void> view;     // the DynamicMemoryView<T>
  std::function<void*()> buffer;  // its currentBuffer().data()
  Datatype dtype = Datatype::UNDEFINED;
  std::vector<py::ssize_t> shape;
};

std::shared_ptr<SpanView> store_span(RecordComponent& component, Offset offset, Extent extent) {
  const Datatype dtype = component.getDatatype();
  auto span = std::make_shared<SpanView>();
  span->dtype = dtype;
  span->shape = shape_of(extent);
  // Without the GIL: a stream lends the buffer from the step, so this may begin the step and
  // wait for a queue slot that a reader thread of this interpreter has to free (which it cannot
  // do while this thread holds the GIL).
  with_element_type(dtype, [&]<typename T>() {
    auto view = call_without_gil([&] {
      return std::make_shared<openPMD::DynamicMemoryView<T>>(
          component.storeChunk<T>(std::move(offset), std::move(extent)));
    });
    span->view = view;
    span->buffer = [view] {
      return call_without_gil([&] { return static_cast<void*>(view->currentBuffer().data()); });
    };
  });
  return span;
}

// A constant's value: a Python or numpy scalar of its exact type.
void make_constant(RecordComponent& component, py::handle value) {
  const openPMD::Attribute attribute = attribute_of(value);
  std::visit(
      [&](const auto& held) {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::complex<float>> ||
                      std::is_same_v<T, std::complex<double>> ||
                      std::is_same_v<T, std::complex<long double>>) {
          component.makeConstant(held);
        } else {
          throw py::type_error("make_constant takes a number or bool, not " +
                               std::string(py::str(py::type::of(value))));
        }
      },
      attribute.getResource());
}

// `value` as the component's exact element type (for Patch_Record_Component.store).
template <typename T>
T element_value(py::handle value, Datatype dtype) {
  const openPMD::Attribute attribute = attribute_of(value, dtype);
  return std::get<T>(attribute.getResource());
}

}  // namespace

void bind_record_component(py::module_& module) {
  Class<ChunkInfo>(module, "ChunkInfo", "A box of a component: offset and extent.")
      .def(py::init<Offset, Extent>(), py::arg("offset"), py::arg("extent"))
      .def_readwrite("offset", &ChunkInfo::offset)
      .def_readwrite("extent", &ChunkInfo::extent)
      .def("__repr__", [](const ChunkInfo& chunk) {
        return "<openPMD.ChunkInfo offset " + extent_text(chunk.offset) + ", extent " +
               extent_text(chunk.extent) + ">";
      });
  Class<WrittenChunkInfo, ChunkInfo>(module, "WrittenChunkInfo",
                                     "A box a writer wrote, and the writer's rank (source_ID).")
      .def(py::init<Offset, Extent, unsigned int>(), py::arg("offset"), py::arg("extent"),
           py::arg("source_ID") = 0)
      .def_readwrite("source_ID", &WrittenChunkInfo::sourceID)
      .def("__repr__", [](const WrittenChunkInfo& chunk) {
        return "<openPMD.WrittenChunkInfo offset " + extent_text(chunk.offset) + ", extent " +
               extent_text(chunk.extent) + ", source_ID " + std::to_string(chunk.sourceID) + ">";
      });

  Class<SpanView>(module, "Dynamic_Memory_View",
                  "The buffer of store_chunk's span form: fill current_buffer() before the next "
                  "flush.")
      .def("current_buffer",
           [](py::object self) {
             const SpanView& span = self.cast<const SpanView&>();
             return py::array(numpy_of_datatype(span.dtype), span.shape, span.buffer(), self);
           })
      .def("__repr__", [](const SpanView& span) {
        return "<openPMD.Dynamic_Memory_View of dimensionality " +
               std::to_string(span.shape.size()) + ">";
      });

  Class<BaseRecordComponent, openPMD::Attributable>(module, "Base_Record_Component")
      .def_property_readonly("unit_SI", &BaseRecordComponent::unitSI)
      .def_property_readonly("dtype",
                             [](const BaseRecordComponent& component) -> py::object {
                               const Datatype dtype = component.getDatatype();
                               if (dtype == Datatype::UNDEFINED) return py::none();
                               return numpy_of_datatype(dtype);
                             })
      .def_property_readonly("constant", &BaseRecordComponent::constant)
      .def(
          "reset_datatype",
          [](py::object self, py::handle dtype) {
            self.cast<BaseRecordComponent&>().resetDatatype(datatype_argument(dtype));
            return self;
          },
          py::arg("dtype"))
      .def("available_chunks", &BaseRecordComponent::availableChunks,
           "The chunks written, with the writer rank of each (source_ID).");

  Class<RecordComponent, BaseRecordComponent> component(module, "Record_Component");
  component.attr("SCALAR") = RecordComponent::SCALAR;
  component
      .def("__repr__",
           [](const RecordComponent& rc) {
             return "<openPMD.Record_Component " + describe(rc) + " of dimensionality " +
                    std::to_string(rc.getDimensionality()) + ">";
           })
      .def_property(
          "unit_SI", &BaseRecordComponent::unitSI,
          [](RecordComponent& rc, double unit) { rc.setUnitSI(unit); })
      .def(
          "set_unit_SI",
          [](py::object self, double unit) {
            self.cast<RecordComponent&>().setUnitSI(unit);
            return self;
          },
          py::arg("unit"))
      .def(
          "reset_dataset",
          [](py::object self, const openPMD::Dataset& dataset) {
            self.cast<RecordComponent&>().resetDataset(dataset);
            return self;
          },
          py::arg("dataset"))
      .def_property_readonly("ndim",
                             [](const RecordComponent& rc) { return int(rc.getDimensionality()); })
      .def_property_readonly("shape", &RecordComponent::getExtent)
      .def_property_readonly("empty", &RecordComponent::empty)
      .def(
          "make_constant",
          [](py::object self, py::handle value) {
            make_constant(self.cast<RecordComponent&>(), value);
            return self;
          },
          py::arg("value"),
          "Every element is `value` (a Python number or bool, or a numpy scalar of the type "
          "wanted); call reset_dataset first for the extent.")
      .def(
          "make_empty",
          [](py::object self, py::handle dtype, int dimensions) {
            if (dimensions < 0 || dimensions > 255) {
              throw py::value_error("make_empty: dimensions must be 0..255");
            }
            self.cast<RecordComponent&>().makeEmpty(datatype_argument(dtype),
                                                   static_cast<std::uint8_t>(dimensions));
            return self;
          },
          py::arg("dtype"), py::arg("dimensions"))
      // store_chunk: the array form, the span form, then anything numpy makes an array of.
      .def(
          "store_chunk",
          [](RecordComponent& rc, py::array data, py::object offset, py::object extent) {
            store_whole(rc, data, offset, extent);
          },
          py::arg("array"), py::arg("offset") = py::none(), py::arg("extent") = py::none(),
          "Queues the store of `array` (C order; other layouts are copied) to the box at "
          "`offset` (default: the origin) of `extent` (default: the array's shape). The array "
          "is kept alive, and must not change, until the next flush.")
      .def(
          "store_chunk",
          [](RecordComponent& rc, Offset offset, Extent extent) {
            return store_span(rc, std::move(offset), std::move(extent));
          },
          py::arg("offset"), py::arg("extent"),
          "The span form: a Dynamic_Memory_View whose current_buffer() is to be filled before "
          "the next flush.")
      .def(
          "store_chunk",
          [](RecordComponent& rc, py::object data, py::object offset, py::object extent) {
            store_whole(rc, data, offset, extent);
          },
          py::arg("array"), py::arg("offset") = py::none(), py::arg("extent") = py::none())
      .def(
          "load_chunk",
          [](RecordComponent& rc, py::array buffer, py::object offset, py::object extent) {
            Offset box_offset = offset_argument(offset, rc.getDimensionality());
            Extent box_extent = extent_argument(extent, rest_of(rc, box_offset));
            const std::uint64_t elements = RecordComponent::elementCount(box_extent);
            if (!(buffer.flags() & py::array::c_style) || !buffer.writeable()) {
              throw py::value_error("load_chunk of " + describe(rc) +
                                    ": the buffer must be a writable C-contiguous array");
            }
            const Datatype buffer_dtype =
                element_datatype(rc.getDatatype(), datatype_of_numpy(buffer.dtype()));
            if (!openPMD::isSame(buffer_dtype, rc.getDatatype())) {
              throw py::type_error("load_chunk of " + describe(rc) + ": a buffer of dtype " +
                                   std::string(py::str(py::handle(buffer.dtype()))) +
                                   " for a component of " +
                                   openPMD::datatypeToString(rc.getDatatype()));
            }
            if (static_cast<std::uint64_t>(buffer.size()) < elements) {
              throw py::index_error("load_chunk of " + describe(rc) + ": a buffer of " +
                                    std::to_string(buffer.size()) + " elements for " +
                                    std::to_string(elements));
            }
            load_into(rc, buffer, std::move(box_offset), std::move(box_extent));
          },
          py::arg("buffer"), py::arg("offset") = py::none(), py::arg("extent") = py::none(),
          "Queues a load of the box into `buffer` (C-contiguous, of the component's dtype).")
      .def(
          "load_chunk",
          [](RecordComponent& rc, py::object offset, py::object extent) {
            Offset box_offset = offset_argument(offset, rc.getDimensionality());
            Extent box_extent = extent_argument(extent, rest_of(rc, box_offset));
            const std::vector<py::ssize_t> shape = shape_of(box_extent);
            return load(rc, std::move(box_offset), std::move(box_extent), shape);
          },
          py::arg("offset") = py::none(), py::arg("extent") = py::none(),
          "A new array of the component's dtype for the box at `offset` (default: the origin) "
          "of `extent` (default: to the end), filled at the next flush or when the iteration "
          "closes.")
      .def(
          "__getitem__",
          [](RecordComponent& rc, py::handle key) {
            Selection selection = parse_selection(rc.getExtent(), key);
            const std::vector<py::ssize_t> shape = selection.shape();
            return load(rc, std::move(selection.offset), std::move(selection.extent), shape);
          },
          py::arg("key"))
      .def(
          "__setitem__",
          [](RecordComponent& rc, py::handle key, py::handle value) {
            Selection selection = parse_selection(rc.getExtent(), key);
            py::array array = store_array(rc, value);
            const std::vector<py::ssize_t> shape = selection.shape();
            std::vector<py::ssize_t> given(array.shape(), array.shape() + array.ndim());
            if (given != shape && given != shape_of(selection.extent)) {
              std::string wanted = "(";
              for (std::size_t d = 0; d < shape.size(); ++d) {
                wanted += (d ? ", " : "") + std::to_string(shape[d]);
              }
              wanted += shape.size() == 1 ? ",)" : ")";
              throw py::index_error("assignment to " + describe(rc) + ": an array of shape " +
                                    shape_text(array) + " for a selection of shape " + wanted);
            }
            store(rc, array, std::move(selection.offset), std::move(selection.extent));
          },
          py::arg("key"), py::arg("value"));

  Class<MeshRecordComponent, RecordComponent>(module, "Mesh_Record_Component")
      .def("__repr__",
           [](const MeshRecordComponent& rc) {
             return "<openPMD.Mesh_Record_Component " + describe(rc) + " of dimensionality " +
                    std::to_string(rc.getDimensionality()) + ">";
           })
      .def_property(
          "position", [](const MeshRecordComponent& rc) { return rc.position<double>(); },
          [](MeshRecordComponent& rc, std::vector<double> position) {
            rc.setPosition(std::move(position));
          },
          "Where in a cell the values sit (fractions of a cell per dimension).")
      .def(
          "set_position",
          [](py::object self, std::vector<double> position) {
            self.cast<MeshRecordComponent&>().setPosition(std::move(position));
            return self;
          },
          py::arg("position"));

  Class<PatchRecordComponent, RecordComponent>(module, "Patch_Record_Component")
      .def("__repr__",
           [](const PatchRecordComponent& rc) {
             return "<openPMD.Patch_Record_Component " + describe(rc) + ">";
           })
      .def(
          "store",
          [](PatchRecordComponent& rc, std::uint64_t index, py::handle value) {
            const Datatype dtype = rc.getDatatype();
            with_element_type(dtype, [&]<typename T>() {
              rc.store(index, element_value<T>(value, dtype));
            });
          },
          py::arg("index"), py::arg("value"),
          "Stores patch `index`'s value (converted to the component's dtype) at the next flush.")
      .def(
          "store",
          [](PatchRecordComponent& rc, py::handle value) {
            const Datatype dtype = rc.getDatatype();
            with_element_type(dtype,
                              [&]<typename T>() { rc.store(element_value<T>(value, dtype)); });
          },
          py::arg("value"), "Stores this writer rank's patch value.")
      .def(
          "load",
          [](PatchRecordComponent& rc) {
            Offset offset(rc.getDimensionality(), 0);
            Extent extent = rc.getExtent();
            const std::vector<py::ssize_t> shape = shape_of(extent);
            return load(rc, std::move(offset), std::move(extent), shape);
          },
          "Every patch's value, filled at the next flush.");
}

}  // namespace openpmd_python

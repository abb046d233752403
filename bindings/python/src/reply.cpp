// Client.command / Client.commands results: slipstream::Reply trees as plain Python values.
#include "slipstream/reply.hpp"

#include <string>

#include "bindings.hpp"
#include "slipstream/error.hpp"

namespace slipstream::python {

py::object reply_to_python(const Reply& reply) {
  switch (reply.kind) {
    case Reply::Kind::kNil:
      return py::none();
    case Reply::Kind::kString:
      return py::bytes(reply.string);
    case Reply::Kind::kStatus:
      return lossy_str(reply.string);
    case Reply::Kind::kError: {
      py::object error = py::module_::import("slipstream._slipstream").attr("ServerError");
      py::object instance = error(lossy_str(reply.string));
      instance.attr("code") = static_cast<int>(ErrorCode::kServer);
      instance.attr("code_name") = std::string(error_code_name(ErrorCode::kServer));
      instance.attr("server_text") = lossy_str(reply.string);
      return instance;
    }
    case Reply::Kind::kInteger:
      return py::int_(reply.integer);
    case Reply::Kind::kBool:
      return py::bool_(reply.integer != 0);
    case Reply::Kind::kDouble:
      return py::float_(std::stod(reply.string));
    case Reply::Kind::kBigNumber:
      return py::int_(py::str(reply.string));
    case Reply::Kind::kMap: {
      py::dict map;
      for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
        py::object key = reply_to_python(reply.elements[i]);
        if (py::isinstance<py::list>(key)) key = py::tuple(key);
        map[key] = reply_to_python(reply.elements[i + 1]);
      }
      return map;
    }
    case Reply::Kind::kArray:
    case Reply::Kind::kSet:
    case Reply::Kind::kPush: {
      py::list list;
      for (const Reply& element : reply.elements) list.append(reply_to_python(element));
      return list;
    }
  }
  return py::none();
}

}  // namespace slipstream::python

// HDF5 handles, errors, attributes and types for the openPMD reader and writer.
#include "openpmd/format/hdf5_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace slipstream::openpmd {
namespace {

// No openPMD attribute comes near this; larger ones are left out unread.
constexpr std::size_t kMaxAttributeBytes = std::size_t{1} << 20;

herr_t innermost_reason(unsigned n, const H5E_error2_t* error, void* data) {
  if (n == 0 && error->desc != nullptr) *static_cast<std::string*>(data) = error->desc;
  return 0;
}

// What a number attribute holds, whatever its variant alternative.
struct Numbers {
  bool is_array = false;
  bool integral = false;
  std::vector<std::int64_t> integers;
  std::vector<double> doubles;
};

Numbers numbers_of(const AttributeValue& value) {
  Numbers n;
  if (auto* i = std::get_if<std::int64_t>(&value)) {
    n.integral = true;
    n.integers = {*i};
  } else if (auto* d = std::get_if<double>(&value)) {
    n.doubles = {*d};
  } else if (auto* is = std::get_if<std::vector<std::int64_t>>(&value)) {
    n.is_array = n.integral = true;
    n.integers = *is;
  } else if (auto* ds = std::get_if<std::vector<double>>(&value)) {
    n.is_array = true;
    n.doubles = *ds;
  }
  if (n.integral) {
    for (std::int64_t i : n.integers) n.doubles.push_back(static_cast<double>(i));
  }
  return n;
}

template <typename T>
std::vector<T> converted(const Numbers& n, const std::string& name) {
  std::vector<T> out;
  for (std::size_t k = 0; k < n.doubles.size(); ++k) {
    if constexpr (std::is_floating_point_v<T>) {
      out.push_back(static_cast<T>(n.doubles[k]));
    } else {
      // Unsigned types: integers as they are, floating point only when whole.
      const double d = n.doubles[k];
      const bool fits = n.integral ? n.integers[k] >= 0
                                   : d >= 0 && std::floor(d) == d &&
                                         d <= static_cast<double>(std::numeric_limits<T>::max());
      if (!fits || (n.integral && static_cast<std::uint64_t>(n.integers[k]) >
                                      std::numeric_limits<T>::max())) {
        throw FileError("attribute '" + name + "' must hold unsigned integers");
      }
      out.push_back(n.integral ? static_cast<T>(n.integers[k]) : static_cast<T>(d));
    }
  }
  return out;
}


template <typename T>
void write_numbers(hid_t object, const std::string& name, hid_t type, const Numbers& n) {
  const std::vector<T> values = converted<T>(n, name);
  write_raw(object, name, type, n.is_array, values.size(), values.data());
}

void write_strings(hid_t object, const std::string& name, const std::vector<std::string>& values,
                   bool is_array) {
  std::size_t size = 1;
  for (const auto& v : values) size = std::max(size, v.size());
  Handle type = checked(H5Tcopy(H5T_C_S1), "string type");
  check(H5Tset_size(type, size), "string type");
  check(H5Tset_strpad(type, H5T_STR_NULLPAD), "string type");
  std::vector<char> buffer(size * values.size(), '\0');
  for (std::size_t k = 0; k < values.size(); ++k) {
    std::memcpy(buffer.data() + k * size, values[k].data(), values[k].size());
  }
  write_raw(object, name, type, is_array, values.size(), buffer.data());
}

// Strings of a fixed-length string attribute: each ends at its first NUL (or, space-padded, at
// its trailing spaces).

// Enumerations (openPMD-api and h5py store booleans so) as the integers behind them.
std::vector<std::int64_t> read_enum(hid_t attribute, hid_t file_type, std::size_t count) {
  Handle native = checked(H5Tget_native_type(file_type, H5T_DIR_ASCEND), "enum type");
  Handle base = checked(H5Tget_super(native), "enum type");
  const std::size_t size = H5Tget_size(base);
  const bool is_signed = H5Tget_sign(base) == H5T_SGN_2;
  if (size != 1 && size != 2 && size != 4 && size != 8) throw FileError("enum of odd size");
  std::vector<unsigned char> buffer(size * count);
  check(H5Aread(attribute, native, buffer.data()), "cannot read an enum attribute");
  std::vector<std::int64_t> out;
  for (std::size_t k = 0; k < count; ++k) {
    const unsigned char* p = buffer.data() + k * size;
    std::int64_t v = 0;
    if (size == 1) v = is_signed ? *reinterpret_cast<const std::int8_t*>(p) : *p;
    if (size == 2) {
      std::int16_t s;
      std::memcpy(&s, p, 2);
      v = is_signed ? s : static_cast<std::uint16_t>(s);
    }
    if (size == 4) {
      std::int32_t s;
      std::memcpy(&s, p, 4);
      v = is_signed ? s : static_cast<std::uint32_t>(s);
    }
    if (size == 8) std::memcpy(&v, p, 8);
    out.push_back(v);
  }
  return out;
}

struct ReadContext {
  std::vector<NamedAttribute>* out;
  std::vector<std::string>* skipped;
};

herr_t read_one(hid_t object, const char* name, const H5A_info_t*, void* data) {
  auto& context = *static_cast<ReadContext*>(data);
  try {
    Handle attribute = checked(H5Aopen(object, name, H5P_DEFAULT), "cannot open attribute");
    Handle type = checked(H5Aget_type(attribute), "attribute type");
    Handle space = checked(H5Aget_space(attribute), "attribute dataspace");
    const int rank = H5Sget_simple_extent_ndims(space);
    const hssize_t points = H5Sget_simple_extent_npoints(space);
    if (rank < 0 || rank > 1 || points < 0) {
      context.skipped->push_back(std::string("attribute '") + name +
                                 "' is not a scalar or a one-dimensional array");
      return 0;
    }
    const bool is_array = rank == 1;
    const auto count = static_cast<std::size_t>(points);
    if (is_array && count == 0) {
      context.skipped->push_back(std::string("attribute '") + name + "' is an empty array");
      return 0;
    }
    // Checked before anything is allocated for it: a file may declare any size.
    const std::size_t element_size = std::max<std::size_t>(H5Tget_size(type), sizeof(double));
    if (count > kMaxAttributeBytes / element_size) {
      context.skipped->push_back(std::string("attribute '") + name + "' declares " +
                                 std::to_string(count) + " elements of " +
                                 std::to_string(element_size) + " bytes, more than " +
                                 std::to_string(kMaxAttributeBytes) + " bytes");
      return 0;
    }
    AttributeValue value;
    switch (H5Tget_class(type)) {
      case H5T_STRING: {
        auto strings = H5Tis_variable_str(type) > 0 ? read_variable_strings(attribute, type, count)
                                                    : read_fixed_strings(attribute, type, count);
        if (is_array) {
          value = std::move(strings);
        } else {
          value = std::move(strings.at(0));
        }
        break;
      }
      case H5T_INTEGER:
      case H5T_ENUM: {
        std::vector<std::int64_t> integers(count);
        if (H5Tget_class(type) == H5T_ENUM) {
          integers = read_enum(attribute, type, count);
        } else {
          check(H5Aread(attribute, H5T_NATIVE_INT64, integers.data()),
                "cannot read an integer attribute");
        }
        if (is_array) {
          value = std::move(integers);
        } else {
          value = integers.at(0);
        }
        break;
      }
      case H5T_FLOAT: {
        std::vector<double> doubles(count);
        check(H5Aread(attribute, H5T_NATIVE_DOUBLE, doubles.data()),
              "cannot read a floating-point attribute");
        if (is_array) {
          value = std::move(doubles);
        } else {
          value = doubles.at(0);
        }
        break;
      }
      default:
        context.skipped->push_back(std::string("attribute '") + name +
                                   "' is not a string, integer or floating-point value");
        return 0;
    }
    context.out->push_back({name, std::move(value)});
  } catch (const FileError& e) {
    context.skipped->push_back(std::string("attribute '") + name + "': " + e.what());
  }
  return 0;
}

}  // namespace

void write_raw(hid_t object, const std::string& name, hid_t type, bool is_array,
               std::size_t count, const void* data) {
  const hsize_t dims[1] = {count};
  Handle space = is_array ? checked(H5Screate_simple(1, dims, nullptr), "dataspace")
                          : checked(H5Screate(H5S_SCALAR), "dataspace");
  Handle attribute = checked(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT,
                                        H5P_DEFAULT),
                             "cannot create attribute '" + name + "'");
  if (count == 0) return;  // an empty array: nothing to write (HDF5 refuses a null buffer)
  check(H5Awrite(attribute, type, data), "cannot write attribute '" + name + "'");
}

std::vector<std::string> read_fixed_strings(hid_t attribute, hid_t file_type, std::size_t count) {
  const std::size_t size = H5Tget_size(file_type);
  Handle type = checked(H5Tcopy(file_type), "string type");
  std::vector<char> buffer(size * count);
  check(H5Aread(attribute, type, buffer.data()), "cannot read a string attribute");
  const bool space_padded = H5Tget_strpad(file_type) == H5T_STR_SPACEPAD;
  std::vector<std::string> out;
  for (std::size_t k = 0; k < count; ++k) {
    std::string s(buffer.data() + k * size, size);
    s.resize(std::min(s.find('\0'), s.size()));
    if (space_padded) s.erase(s.find_last_not_of(' ') + 1);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> read_variable_strings(hid_t attribute, hid_t file_type,
                                               std::size_t count) {
  Handle type = checked(H5Tcopy(H5T_C_S1), "string type");
  check(H5Tset_size(type, H5T_VARIABLE), "string type");
  // HDF5 converts no strings between character sets: read UTF-8 (h5py's default) as UTF-8.
  check(H5Tset_cset(type, H5Tget_cset(file_type)), "string type");
  std::vector<char*> pointers(count, nullptr);
  check(H5Aread(attribute, type, pointers.data()), "cannot read a string attribute");
  std::vector<std::string> out;
  for (char* p : pointers) {
    out.emplace_back(p != nullptr ? p : "");
    H5free_memory(p);
  }
  return out;
}

namespace {
herr_t collect_link(hid_t, const char* name, const H5L_info_t* info, void* data) {
  static_cast<std::vector<Link>*>(data)->push_back({name, info->type == H5L_TYPE_HARD});
  return 0;
}
}  // namespace

std::vector<Link> links_of(hid_t group) {
  std::vector<Link> links;
  check(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link, &links),
        "cannot list a group");
  return links;
}


void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

hid_t check(hid_t status, std::string_view what) {
  if (status >= 0) return status;
  std::string reason;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_reason, &reason);
  throw FileError(std::string(what) + (reason.empty() ? "" : ": " + reason));
}

void Handle::reset() noexcept {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
  id_ = H5I_INVALID_HID;
}

Handle open_if_exists(hid_t base, const std::vector<std::string>& segments) {
  Handle current;
  hid_t at = base;
  for (const std::string& segment : segments) {
    if (check(H5Lexists(at, segment.c_str(), H5P_DEFAULT), "cannot look up '" + segment + "'") ==
        0) {
      return Handle();
    }
    H5L_info_t link{};
    check(H5Lget_info(at, segment.c_str(), &link, H5P_DEFAULT), "cannot look up '" + segment + "'");
    if (link.type != H5L_TYPE_HARD) return Handle();
    current = checked(H5Oopen(at, segment.c_str(), H5P_DEFAULT), "cannot open '" + segment + "'");
    at = current;
  }
  if (segments.empty()) return checked(H5Oopen(base, ".", H5P_DEFAULT), "cannot open a group");
  return current;
}

Handle open_or_create_group(hid_t base, const std::vector<std::string>& segments) {
  Handle current = checked(H5Oopen(base, ".", H5P_DEFAULT), "cannot open a group");
  for (const std::string& segment : segments) {
    const bool exists =
        check(H5Lexists(current, segment.c_str(), H5P_DEFAULT), "cannot look up '" + segment + "'");
    Handle next =
        exists ? checked(H5Oopen(current, segment.c_str(), H5P_DEFAULT),
                         "cannot open '" + segment + "'")
               : checked(H5Gcreate2(current, segment.c_str(), H5P_DEFAULT, H5P_DEFAULT,
                                    H5P_DEFAULT),
                         "cannot create group '" + segment + "'");
    if (H5Iget_type(next) != H5I_GROUP) {
      throw FileError("'" + segment + "' is a dataset where a group is needed");
    }
    current = std::move(next);
  }
  return current;
}

void write_attribute(hid_t object, const std::string& name, const AttributeValue& value,
                     StoredType type) {
  if (check(H5Aexists(object, name.c_str()), "cannot look up attribute '" + name + "'") > 0) {
    check(H5Adelete(object, name.c_str()), "cannot replace attribute '" + name + "'");
  }
  if (auto* s = std::get_if<std::string>(&value)) return write_strings(object, name, {*s}, false);
  if (auto* ss = std::get_if<std::vector<std::string>>(&value)) {
    return write_strings(object, name, *ss, true);
  }
  const Numbers n = numbers_of(value);
  switch (type) {
    case StoredType::kFloat64: return write_numbers<double>(object, name, H5T_NATIVE_DOUBLE, n);
    case StoredType::kFloat32: return write_numbers<float>(object, name, H5T_NATIVE_FLOAT, n);
    case StoredType::kUInt32:
      return write_numbers<std::uint32_t>(object, name, H5T_NATIVE_UINT32, n);
    case StoredType::kUInt64:
      return write_numbers<std::uint64_t>(object, name, H5T_NATIVE_UINT64, n);
    case StoredType::kAsGiven: break;
  }
  if (n.integral) {
    write_raw(object, name, H5T_NATIVE_INT64, n.is_array, n.integers.size(), n.integers.data());
  } else {
    write_raw(object, name, H5T_NATIVE_DOUBLE, n.is_array, n.doubles.size(), n.doubles.data());
  }
}

std::vector<NamedAttribute> read_attributes(hid_t object, std::vector<std::string>& skipped) {
  std::vector<NamedAttribute> out;
  ReadContext context{&out, &skipped};
  check(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, read_one, &context),
        "cannot list attributes");
  return out;
}

bool has_attribute(hid_t object, const std::string& name) {
  return check(H5Aexists(object, name.c_str()), "cannot look up attribute '" + name + "'") > 0;
}

Handle memory_type(DType dtype) {
  hid_t native = H5T_NATIVE_DOUBLE;
  switch (dtype) {
    case DType::kFloat32: native = H5T_NATIVE_FLOAT; break;
    case DType::kFloat64: native = H5T_NATIVE_DOUBLE; break;
    case DType::kInt8: native = H5T_NATIVE_INT8; break;
    case DType::kInt16: native = H5T_NATIVE_INT16; break;
    case DType::kInt32: native = H5T_NATIVE_INT32; break;
    case DType::kInt64: native = H5T_NATIVE_INT64; break;
    case DType::kUInt8: native = H5T_NATIVE_UINT8; break;
    case DType::kUInt16: native = H5T_NATIVE_UINT16; break;
    case DType::kUInt32: native = H5T_NATIVE_UINT32; break;
    case DType::kUInt64: native = H5T_NATIVE_UINT64; break;
    case DType::kBool: {
      Handle type = checked(H5Tenum_create(H5T_NATIVE_INT8), "bool type");
      const std::int8_t no = 0, yes = 1;
      check(H5Tenum_insert(type, "FALSE", &no), "bool type");
      check(H5Tenum_insert(type, "TRUE", &yes), "bool type");
      return type;
    }
  }
  return checked(H5Tcopy(native), "memory type");
}

DType dtype_for(hid_t file_type) {
  const std::size_t size = H5Tget_size(file_type);
  switch (H5Tget_class(file_type)) {
    case H5T_FLOAT:
      if (size == 4) return DType::kFloat32;
      if (size == 8) return DType::kFloat64;
      throw FileError("floating-point elements of " + std::to_string(size) +
                      " bytes (a stream carries 4 and 8)");
    case H5T_INTEGER:
      if (H5Tget_sign(file_type) == H5T_SGN_2) {
        if (size == 1) return DType::kInt8;
        if (size == 2) return DType::kInt16;
        if (size == 4) return DType::kInt32;
        if (size == 8) return DType::kInt64;
      } else {
        if (size == 1) return DType::kUInt8;
        if (size == 2) return DType::kUInt16;
        if (size == 4) return DType::kUInt32;
        if (size == 8) return DType::kUInt64;  // particle patches' numParticles, ...
      }
      throw FileError(std::string(H5Tget_sign(file_type) == H5T_SGN_2 ? "signed" : "unsigned") +
                      " integers of " + std::to_string(size) +
                      " bytes (a stream carries 1, 2, 4 and 8 bytes, signed and unsigned)");
    case H5T_ENUM: {
      // A boolean: an enum of one byte with the members FALSE and TRUE (h5py, openPMD-api).
      if (size == 1 && H5Tget_nmembers(file_type) == 2) {
        std::int8_t value = -1;
        if (H5Tenum_valueof(file_type, "FALSE", &value) >= 0 && value == 0 &&
            H5Tenum_valueof(file_type, "TRUE", &value) >= 0 && value == 1) {
          return DType::kBool;
        }
      }
      throw FileError("an enumeration other than a boolean (FALSE = 0, TRUE = 1)");
    }
    default:
      throw FileError("elements that are not numbers or booleans");
  }
}

}  // namespace slipstream::openpmd

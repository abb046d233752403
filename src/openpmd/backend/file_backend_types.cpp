// Element types and exactly typed attributes of openPMD's Datatypes in HDF5 (file backend).
#include "openpmd/backend/file_backend_types.hpp"

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <variant>

namespace openPMD::internal {
namespace {

using slipstream::openpmd::check;
using slipstream::openpmd::checked;
using slipstream::openpmd::FileError;
using slipstream::openpmd::read_fixed_strings;
using slipstream::openpmd::read_variable_strings;
using slipstream::openpmd::write_raw;

// No openPMD attribute comes near this; larger ones are left out unread (as hdf5_util does).
constexpr std::size_t kMaxAttributeBytes = std::size_t{1} << 20;

Handle copy_of(hid_t native) { return checked(H5Tcopy(native), "cannot copy an HDF5 type"); }

// h5py's complex numbers: a compound of the real part `r` and the imaginary part `i`.
Handle complex_type(hid_t part, std::size_t part_size) {
  Handle type = checked(H5Tcreate(H5T_COMPOUND, 2 * part_size), "cannot make a complex type");
  check(H5Tinsert(type, "r", 0, part), "cannot make a complex type");
  check(H5Tinsert(type, "i", part_size, part), "cannot make a complex type");
  return type;
}

bool is_bool_enum(hid_t type) {
  if (H5Tget_size(type) != 1 || H5Tget_nmembers(type) != 2) return false;
  std::int8_t value = -1;
  if (H5Tenum_valueof(type, "FALSE", &value) < 0 || value != 0) return false;
  return H5Tenum_valueof(type, "TRUE", &value) >= 0 && value == 1;
}

std::string member_name(hid_t type, unsigned index) {
  char* name = H5Tget_member_name(type, index);
  if (name == nullptr) return {};
  std::string out(name);
  H5free_memory(name);
  return out;
}

std::optional<Datatype> complex_of(hid_t type) {
  if (H5Tget_nmembers(type) != 2 || member_name(type, 0) != "r" || member_name(type, 1) != "i") {
    return std::nullopt;
  }
  if (H5Tget_member_class(type, 0) != H5T_FLOAT || H5Tget_member_class(type, 1) != H5T_FLOAT) {
    return std::nullopt;
  }
  Handle real = checked(H5Tget_member_type(type, 0), "cannot read a compound type");
  Handle imaginary = checked(H5Tget_member_type(type, 1), "cannot read a compound type");
  const std::size_t part = H5Tget_size(real);
  if (H5Tget_size(imaginary) != part || H5Tget_member_offset(type, 0) != 0 ||
      H5Tget_member_offset(type, 1) != part || H5Tget_size(type) != 2 * part) {
    return std::nullopt;
  }
  if (part == sizeof(float)) return Datatype::CFLOAT;
  if (part == sizeof(double)) return Datatype::CDOUBLE;
  if (part == sizeof(long double)) return Datatype::CLONG_DOUBLE;
  return std::nullopt;
}

// What an element is, for same_element(): 'i' signed and 'u' unsigned integers, 'f' floating
// point, 'c' complex, 'b' boolean; 0 for the rest.
std::pair<char, std::size_t> element_class(Datatype dtype) {
  constexpr char kChar = std::is_signed_v<char> ? 'i' : 'u';
  switch (dtype) {
    case Datatype::CHAR: return {kChar, 1};
    case Datatype::SCHAR: return {'i', 1};
    case Datatype::UCHAR: return {'u', 1};
    case Datatype::SHORT: return {'i', sizeof(short)};
    case Datatype::INT: return {'i', sizeof(int)};
    case Datatype::LONG: return {'i', sizeof(long)};
    case Datatype::LONGLONG: return {'i', sizeof(long long)};
    case Datatype::USHORT: return {'u', sizeof(unsigned short)};
    case Datatype::UINT: return {'u', sizeof(unsigned int)};
    case Datatype::ULONG: return {'u', sizeof(unsigned long)};
    case Datatype::ULONGLONG: return {'u', sizeof(unsigned long long)};
    case Datatype::FLOAT: return {'f', sizeof(float)};
    case Datatype::DOUBLE: return {'f', sizeof(double)};
    case Datatype::LONG_DOUBLE: return {'f', sizeof(long double)};
    case Datatype::CFLOAT: return {'c', 2 * sizeof(float)};
    case Datatype::CDOUBLE: return {'c', 2 * sizeof(double)};
    case Datatype::CLONG_DOUBLE: return {'c', 2 * sizeof(long double)};
    case Datatype::BOOL: return {'b', 1};
    default: return {0, 0};
  }
}

// ---- Writing


// Fixed-length, NUL-terminated ASCII as openPMD-api writes strings: as long as the string (the
// longest of a vector), at least one character (HDF5 has no empty fixed-length strings).
void write_strings(hid_t object, const std::string& name, const std::vector<std::string>& values,
                   bool is_array) {
  std::size_t size = 1;
  for (const std::string& v : values) size = std::max(size, v.size());
  Handle type = copy_of(H5T_C_S1);
  check(H5Tset_size(type, size), "cannot make a string type");
  std::vector<char> buffer(size * values.size(), '\0');
  for (std::size_t k = 0; k < values.size(); ++k) {
    std::memcpy(buffer.data() + k * size, values[k].data(), values[k].size());
  }
  write_raw(object, name, type, is_array, values.size(), buffer.data());
}

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

struct AttributeWriter {
  hid_t object;
  const std::string& name;

  template <typename T>
  void operator()(const T& value) const {
    if constexpr (std::is_same_v<T, std::string>) {
      write_strings(object, name, {value}, false);
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      write_strings(object, name, value, true);
    } else if constexpr (std::is_same_v<T, std::array<double, 7>>) {
      write_raw(object, name, element_type(Datatype::DOUBLE), true, 7, value.data());
    } else if constexpr (std::is_same_v<T, bool>) {
      const std::int8_t byte = value ? 1 : 0;
      write_raw(object, name, element_type(Datatype::BOOL), false, 1, &byte);
    } else if constexpr (IsVector<T>::value) {
      Handle type = element_type(determineDatatype<typename T::value_type>());
      write_raw(object, name, type, true, value.size(), value.data());
    } else {
      write_raw(object, name, element_type(determineDatatype<T>()), false, 1, &value);
    }
  }
};

// ---- Reading

template <typename T>
Attribute exactly(T value) {
  return Attribute(Attribute::resource(std::in_place_type<T>, std::move(value)));
}

template <typename T>
Attribute read_numbers(hid_t attribute, const std::string& name, bool is_array,
                       std::size_t count) {
  Handle type = element_type(determineDatatype<T>());
  std::vector<T> values(count);
  if (count > 0) {
    check(H5Aread(attribute, type, values.data()), "cannot read attribute '" + name + "'");
  }
  if (is_array) return exactly(std::move(values));
  return exactly(values.at(0));
}

Attribute read_as(Datatype dtype, hid_t attribute, const std::string& name, bool is_array,
                  std::size_t count) {
  switch (dtype) {
    case Datatype::CHAR: return read_numbers<char>(attribute, name, is_array, count);
    case Datatype::UCHAR: return read_numbers<unsigned char>(attribute, name, is_array, count);
    case Datatype::SCHAR: return read_numbers<signed char>(attribute, name, is_array, count);
    case Datatype::SHORT: return read_numbers<short>(attribute, name, is_array, count);
    case Datatype::INT: return read_numbers<int>(attribute, name, is_array, count);
    case Datatype::LONG: return read_numbers<long>(attribute, name, is_array, count);
    case Datatype::LONGLONG: return read_numbers<long long>(attribute, name, is_array, count);
    case Datatype::USHORT: return read_numbers<unsigned short>(attribute, name, is_array, count);
    case Datatype::UINT: return read_numbers<unsigned int>(attribute, name, is_array, count);
    case Datatype::ULONG: return read_numbers<unsigned long>(attribute, name, is_array, count);
    case Datatype::ULONGLONG:
      return read_numbers<unsigned long long>(attribute, name, is_array, count);
    case Datatype::FLOAT: return read_numbers<float>(attribute, name, is_array, count);
    case Datatype::DOUBLE: {
      Attribute value = read_numbers<double>(attribute, name, is_array, count);
      if (name == "unitDimension" && is_array && count == 7) {
        return exactly(value.get<std::array<double, 7>>());
      }
      return value;
    }
    case Datatype::LONG_DOUBLE:
      return read_numbers<long double>(attribute, name, is_array, count);
    case Datatype::CFLOAT:
      return read_numbers<std::complex<float>>(attribute, name, is_array, count);
    case Datatype::CDOUBLE:
      return read_numbers<std::complex<double>>(attribute, name, is_array, count);
    case Datatype::CLONG_DOUBLE:
      return read_numbers<std::complex<long double>>(attribute, name, is_array, count);
    case Datatype::BOOL: {
      if (is_array) throw FileError("it is an array of booleans (openPMD has no such attribute)");
      Handle type = element_type(Datatype::BOOL);
      std::int8_t byte = 0;
      check(H5Aread(attribute, type, &byte), "cannot read attribute '" + name + "'");
      return exactly(byte != 0);
    }
    default: throw FileError("it has a type openPMD does not know");
  }
}

// Each string ends at its first NUL (or, space-padded, at its trailing spaces).

Attribute read_one(hid_t object, const std::string& name) {
  Handle attribute = checked(H5Aopen(object, name.c_str(), H5P_DEFAULT), "cannot open it");
  Handle type = checked(H5Aget_type(attribute), "cannot read its type");
  Handle space = checked(H5Aget_space(attribute), "cannot read its dataspace");
  const int rank = H5Sget_simple_extent_ndims(space);
  const hssize_t points = H5Sget_simple_extent_npoints(space);
  if (rank < 0 || rank > 1 || points < 0) {
    throw FileError("it is not a scalar or a one-dimensional array");
  }
  const bool is_array = rank == 1;
  const auto count = static_cast<std::size_t>(points);
  if (!is_array && count != 1) throw FileError("it has no value (a null dataspace)");
  // Checked before anything is allocated for it: a file may declare any size.
  const std::size_t element_size = std::max<std::size_t>(H5Tget_size(type), sizeof(char*));
  if (count > kMaxAttributeBytes / element_size) {
    throw FileError("it declares " + std::to_string(count) + " elements of " +
                    std::to_string(element_size) + " bytes, more than " +
                    std::to_string(kMaxAttributeBytes) + " bytes");
  }
  if (H5Tget_class(type) == H5T_STRING) {
    std::vector<std::string> strings = H5Tis_variable_str(type) > 0
                                           ? read_variable_strings(attribute, type, count)
                                           : read_fixed_strings(attribute, type, count);
    if (is_array) return exactly(std::move(strings));
    return exactly(std::move(strings.at(0)));
  }
  const std::optional<Datatype> dtype = datatype_of(type);
  if (!dtype) throw FileError("it has a type openPMD does not know");
  return read_as(*dtype, attribute, name, is_array, count);
}

herr_t collect_name(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

}  // namespace

Handle element_type(Datatype dtype) {
  switch (dtype) {
    case Datatype::CHAR: return copy_of(H5T_NATIVE_CHAR);
    case Datatype::UCHAR: return copy_of(H5T_NATIVE_UCHAR);
    case Datatype::SCHAR: return copy_of(H5T_NATIVE_SCHAR);
    case Datatype::SHORT: return copy_of(H5T_NATIVE_SHORT);
    case Datatype::INT: return copy_of(H5T_NATIVE_INT);
    case Datatype::LONG: return copy_of(H5T_NATIVE_LONG);
    case Datatype::LONGLONG: return copy_of(H5T_NATIVE_LLONG);
    case Datatype::USHORT: return copy_of(H5T_NATIVE_USHORT);
    case Datatype::UINT: return copy_of(H5T_NATIVE_UINT);
    case Datatype::ULONG: return copy_of(H5T_NATIVE_ULONG);
    case Datatype::ULONGLONG: return copy_of(H5T_NATIVE_ULLONG);
    case Datatype::FLOAT: return copy_of(H5T_NATIVE_FLOAT);
    case Datatype::DOUBLE: return copy_of(H5T_NATIVE_DOUBLE);
    case Datatype::LONG_DOUBLE: return copy_of(H5T_NATIVE_LDOUBLE);
    case Datatype::CFLOAT: return complex_type(H5T_NATIVE_FLOAT, sizeof(float));
    case Datatype::CDOUBLE: return complex_type(H5T_NATIVE_DOUBLE, sizeof(double));
    case Datatype::CLONG_DOUBLE: return complex_type(H5T_NATIVE_LDOUBLE, sizeof(long double));
    case Datatype::BOOL: {
      Handle type = checked(H5Tenum_create(H5T_NATIVE_INT8), "cannot make the boolean type");
      const std::int8_t no = 0, yes = 1;
      check(H5Tenum_insert(type, "FALSE", &no), "cannot make the boolean type");
      check(H5Tenum_insert(type, "TRUE", &yes), "cannot make the boolean type");
      return type;
    }
    default:
      throw FileError("datasets of " + datatypeToString(dtype) +
                      " are not possible (expected a number or a boolean)");
  }
}

std::optional<Datatype> datatype_of(hid_t type) {
  const std::size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
      if (size == 1) {
        if (!is_signed) return Datatype::UCHAR;
        return std::is_signed_v<char> ? Datatype::CHAR : Datatype::SCHAR;
      }
      if (size == sizeof(short)) return is_signed ? Datatype::SHORT : Datatype::USHORT;
      if (size == sizeof(int)) return is_signed ? Datatype::INT : Datatype::UINT;
      if (size == sizeof(long)) return is_signed ? Datatype::LONG : Datatype::ULONG;
      if (size == sizeof(long long)) return is_signed ? Datatype::LONGLONG : Datatype::ULONGLONG;
      return std::nullopt;
    }
    case H5T_FLOAT:
      if (size == sizeof(float)) return Datatype::FLOAT;
      if (size == sizeof(double)) return Datatype::DOUBLE;
      if (size == sizeof(long double)) return Datatype::LONG_DOUBLE;
      return std::nullopt;
    case H5T_ENUM:
      if (is_bool_enum(type)) return Datatype::BOOL;
      return std::nullopt;
    case H5T_COMPOUND: return complex_of(type);
    default: return std::nullopt;
  }
}

bool same_element(Datatype a, Datatype b) {
  const auto kind = element_class(a);
  return kind.first != 0 && kind == element_class(b);
}

void write_typed_attribute(hid_t object, const std::string& name, const Attribute& value) {
  if (check(H5Aexists(object, name.c_str()), "cannot look up attribute '" + name + "'") > 0) {
    check(H5Adelete(object, name.c_str()), "cannot replace attribute '" + name + "'");
  }
  std::visit(AttributeWriter{object, name}, value.getResource());
}

std::vector<TypedAttribute> read_typed_attributes(hid_t object,
                                                  std::vector<std::string>& skipped) {
  std::vector<std::string> names;
  check(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names),
        "cannot list attributes");
  std::vector<TypedAttribute> out;
  for (const std::string& name : names) {
    try {
      out.push_back({name, read_one(object, name)});
    } catch (const FileError& e) {
      skipped.push_back("attribute '" + name + "' left out: " + e.what());
    }
  }
  return out;
}

}  // namespace openPMD::internal

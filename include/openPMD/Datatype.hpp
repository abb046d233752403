// openPMD-api's element and attribute types: the Datatype enumeration, the C++ type of each
// (determineDatatype<T>()) and their sizes, as openPMD-api programs name them.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "slipstream/export.hpp"

namespace openPMD {

/// The types of datasets and attributes, in openPMD-api's order and names.
enum class Datatype : int {
  CHAR, UCHAR, SCHAR, SHORT, INT, LONG, LONGLONG, USHORT, UINT, ULONG, ULONGLONG,
  FLOAT, DOUBLE, LONG_DOUBLE, CFLOAT, CDOUBLE, CLONG_DOUBLE,
  STRING,
  VEC_CHAR, VEC_SHORT, VEC_INT, VEC_LONG, VEC_LONGLONG, VEC_UCHAR, VEC_USHORT, VEC_UINT,
  VEC_ULONG, VEC_ULONGLONG, VEC_FLOAT, VEC_DOUBLE, VEC_LONG_DOUBLE, VEC_CFLOAT, VEC_CDOUBLE,
  VEC_CLONG_DOUBLE, VEC_SCHAR, VEC_STRING,
  ARR_DBL_7,
  BOOL,
  UNDEFINED
};

using Extent = std::vector<std::uint64_t>;
using Offset = std::vector<std::uint64_t>;

namespace detail {
template <typename T>
struct DatatypeOf {
  static constexpr Datatype value = Datatype::UNDEFINED;
};
#define OPENPMD_SLIPSTREAM_DATATYPE(TYPE, SCALAR, VECTOR)                             \
  template <>                                                                         \
  struct DatatypeOf<TYPE> {                                                           \
    static constexpr Datatype value = Datatype::SCALAR;                               \
  };                                                                                  \
  template <>                                                                         \
  struct DatatypeOf<std::vector<TYPE>> {                                              \
    static constexpr Datatype value = Datatype::VECTOR;                               \
  };
OPENPMD_SLIPSTREAM_DATATYPE(char, CHAR, VEC_CHAR)
OPENPMD_SLIPSTREAM_DATATYPE(unsigned char, UCHAR, VEC_UCHAR)
OPENPMD_SLIPSTREAM_DATATYPE(signed char, SCHAR, VEC_SCHAR)
OPENPMD_SLIPSTREAM_DATATYPE(short, SHORT, VEC_SHORT)
OPENPMD_SLIPSTREAM_DATATYPE(int, INT, VEC_INT)
OPENPMD_SLIPSTREAM_DATATYPE(long, LONG, VEC_LONG)
OPENPMD_SLIPSTREAM_DATATYPE(long long, LONGLONG, VEC_LONGLONG)
OPENPMD_SLIPSTREAM_DATATYPE(unsigned short, USHORT, VEC_USHORT)
OPENPMD_SLIPSTREAM_DATATYPE(unsigned int, UINT, VEC_UINT)
OPENPMD_SLIPSTREAM_DATATYPE(unsigned long, ULONG, VEC_ULONG)
OPENPMD_SLIPSTREAM_DATATYPE(unsigned long long, ULONGLONG, VEC_ULONGLONG)
OPENPMD_SLIPSTREAM_DATATYPE(float, FLOAT, VEC_FLOAT)
OPENPMD_SLIPSTREAM_DATATYPE(double, DOUBLE, VEC_DOUBLE)
OPENPMD_SLIPSTREAM_DATATYPE(long double, LONG_DOUBLE, VEC_LONG_DOUBLE)
OPENPMD_SLIPSTREAM_DATATYPE(std::complex<float>, CFLOAT, VEC_CFLOAT)
OPENPMD_SLIPSTREAM_DATATYPE(std::complex<double>, CDOUBLE, VEC_CDOUBLE)
OPENPMD_SLIPSTREAM_DATATYPE(std::complex<long double>, CLONG_DOUBLE, VEC_CLONG_DOUBLE)
OPENPMD_SLIPSTREAM_DATATYPE(std::string, STRING, VEC_STRING)
#undef OPENPMD_SLIPSTREAM_DATATYPE
template <>
struct DatatypeOf<bool> {
  static constexpr Datatype value = Datatype::BOOL;
};
template <>
struct DatatypeOf<std::array<double, 7>> {
  static constexpr Datatype value = Datatype::ARR_DBL_7;
};
}  // namespace detail

/// The Datatype of T (UNDEFINED for types openPMD does not know). const and pointers to T and
/// shared_ptr<T> name T's type, as in openPMD-api.
template <typename T>
constexpr Datatype determineDatatype() {
  using Bare = std::remove_cv_t<std::remove_reference_t<T>>;
  return detail::DatatypeOf<Bare>::value;
}
template <typename T>
constexpr Datatype determineDatatype(const std::shared_ptr<T>&) {
  return determineDatatype<std::remove_extent_t<T>>();
}
template <typename T>
constexpr Datatype determineDatatype(const T*) {
  return determineDatatype<T>();
}

/// Bytes of one element of `dtype` (vectors: of one of their elements; strings: of one char).
/// Throws std::invalid_argument for UNDEFINED.
SLIPSTREAM_API std::size_t toBytes(Datatype dtype);
/// Bits of one element.
SLIPSTREAM_API std::size_t toBits(Datatype dtype);
/// Vectors (VEC_*) and ARR_DBL_7.
SLIPSTREAM_API bool isVector(Datatype dtype);
/// FLOAT, DOUBLE, LONG_DOUBLE and their vectors.
SLIPSTREAM_API bool isFloatingPoint(Datatype dtype);
/// CFLOAT, CDOUBLE, CLONG_DOUBLE and their vectors.
SLIPSTREAM_API bool isComplexFloatingPoint(Datatype dtype);
/// Every integer type (char types and bool excluded) and their vectors.
SLIPSTREAM_API bool isInteger(Datatype dtype);
/// CHAR, UCHAR, SCHAR and their vectors.
SLIPSTREAM_API bool isChar(Datatype dtype);
/// The element type of a vector type (VEC_INT -> INT), or `dtype` itself.
SLIPSTREAM_API Datatype basicDatatype(Datatype dtype);
/// The vector type of a scalar type (INT -> VEC_INT), or `dtype` itself.
SLIPSTREAM_API Datatype toVectorType(Datatype dtype);
/// True when both are the same type or two names of one representation (LONG and LONGLONG on
/// LP64, ULONG and ULONGLONG).
SLIPSTREAM_API bool isSame(Datatype a, Datatype b);
/// The name as openPMD-api writes it ("DOUBLE", "VEC_STRING").
SLIPSTREAM_API std::string datatypeToString(Datatype dtype);
/// The Datatype a name stands for; throws std::invalid_argument for an unknown name.
SLIPSTREAM_API Datatype stringToDatatype(const std::string& name);
SLIPSTREAM_API std::ostream& operator<<(std::ostream& out, Datatype dtype);

}  // namespace openPMD

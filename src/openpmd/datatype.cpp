// Datatype's sizes, classes and names, as openPMD-api defines them.
#include <array>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>

#include "openPMD/Datatype.hpp"

namespace openPMD {
namespace {

struct TypeInfo {
  Datatype dtype;
  const char* name;
  std::size_t bytes;  // of one element (vectors: of one of theirs)
  Datatype basic;
};

constexpr std::array kTypes = {
    TypeInfo{Datatype::CHAR, "CHAR", sizeof(char), Datatype::CHAR},
    TypeInfo{Datatype::UCHAR, "UCHAR", sizeof(unsigned char), Datatype::UCHAR},
    TypeInfo{Datatype::SCHAR, "SCHAR", sizeof(signed char), Datatype::SCHAR},
    TypeInfo{Datatype::SHORT, "SHORT", sizeof(short), Datatype::SHORT},
    TypeInfo{Datatype::INT, "INT", sizeof(int), Datatype::INT},
    TypeInfo{Datatype::LONG, "LONG", sizeof(long), Datatype::LONG},
    TypeInfo{Datatype::LONGLONG, "LONGLONG", sizeof(long long), Datatype::LONGLONG},
    TypeInfo{Datatype::USHORT, "USHORT", sizeof(unsigned short), Datatype::USHORT},
    TypeInfo{Datatype::UINT, "UINT", sizeof(unsigned int), Datatype::UINT},
    TypeInfo{Datatype::ULONG, "ULONG", sizeof(unsigned long), Datatype::ULONG},
    TypeInfo{Datatype::ULONGLONG, "ULONGLONG", sizeof(unsigned long long), Datatype::ULONGLONG},
    TypeInfo{Datatype::FLOAT, "FLOAT", sizeof(float), Datatype::FLOAT},
    TypeInfo{Datatype::DOUBLE, "DOUBLE", sizeof(double), Datatype::DOUBLE},
    TypeInfo{Datatype::LONG_DOUBLE, "LONG_DOUBLE", sizeof(long double), Datatype::LONG_DOUBLE},
    TypeInfo{Datatype::CFLOAT, "CFLOAT", sizeof(float) * 2, Datatype::CFLOAT},
    TypeInfo{Datatype::CDOUBLE, "CDOUBLE", sizeof(double) * 2, Datatype::CDOUBLE},
    TypeInfo{Datatype::CLONG_DOUBLE, "CLONG_DOUBLE", sizeof(long double) * 2,
             Datatype::CLONG_DOUBLE},
    TypeInfo{Datatype::STRING, "STRING", sizeof(char), Datatype::STRING},
    TypeInfo{Datatype::VEC_CHAR, "VEC_CHAR", sizeof(char), Datatype::CHAR},
    TypeInfo{Datatype::VEC_SHORT, "VEC_SHORT", sizeof(short), Datatype::SHORT},
    TypeInfo{Datatype::VEC_INT, "VEC_INT", sizeof(int), Datatype::INT},
    TypeInfo{Datatype::VEC_LONG, "VEC_LONG", sizeof(long), Datatype::LONG},
    TypeInfo{Datatype::VEC_LONGLONG, "VEC_LONGLONG", sizeof(long long), Datatype::LONGLONG},
    TypeInfo{Datatype::VEC_UCHAR, "VEC_UCHAR", sizeof(unsigned char), Datatype::UCHAR},
    TypeInfo{Datatype::VEC_USHORT, "VEC_USHORT", sizeof(unsigned short), Datatype::USHORT},
    TypeInfo{Datatype::VEC_UINT, "VEC_UINT", sizeof(unsigned int), Datatype::UINT},
    TypeInfo{Datatype::VEC_ULONG, "VEC_ULONG", sizeof(unsigned long), Datatype::ULONG},
    TypeInfo{Datatype::VEC_ULONGLONG, "VEC_ULONGLONG", sizeof(unsigned long long),
             Datatype::ULONGLONG},
    TypeInfo{Datatype::VEC_FLOAT, "VEC_FLOAT", sizeof(float), Datatype::FLOAT},
    TypeInfo{Datatype::VEC_DOUBLE, "VEC_DOUBLE", sizeof(double), Datatype::DOUBLE},
    TypeInfo{Datatype::VEC_LONG_DOUBLE, "VEC_LONG_DOUBLE", sizeof(long double),
             Datatype::LONG_DOUBLE},
    TypeInfo{Datatype::VEC_CFLOAT, "VEC_CFLOAT", sizeof(float) * 2, Datatype::CFLOAT},
    TypeInfo{Datatype::VEC_CDOUBLE, "VEC_CDOUBLE", sizeof(double) * 2, Datatype::CDOUBLE},
    TypeInfo{Datatype::VEC_CLONG_DOUBLE, "VEC_CLONG_DOUBLE", sizeof(long double) * 2,
             Datatype::CLONG_DOUBLE},
    TypeInfo{Datatype::VEC_SCHAR, "VEC_SCHAR", sizeof(signed char), Datatype::SCHAR},
    TypeInfo{Datatype::VEC_STRING, "VEC_STRING", sizeof(char), Datatype::STRING},
    TypeInfo{Datatype::ARR_DBL_7, "ARR_DBL_7", sizeof(double), Datatype::DOUBLE},
    TypeInfo{Datatype::BOOL, "BOOL", sizeof(bool), Datatype::BOOL},
    TypeInfo{Datatype::UNDEFINED, "UNDEFINED", 0, Datatype::UNDEFINED},
};

const TypeInfo& info(Datatype dtype) {
  const auto index = static_cast<std::size_t>(dtype);
  if (index >= kTypes.size()) throw std::invalid_argument("not a Datatype");
  return kTypes[index];
}

}  // namespace

std::size_t toBytes(Datatype dtype) {
  if (dtype == Datatype::UNDEFINED) throw std::invalid_argument("toBytes: Datatype::UNDEFINED");
  return info(dtype).bytes;
}

std::size_t toBits(Datatype dtype) { return toBytes(dtype) * 8; }

bool isVector(Datatype dtype) {
  return (dtype >= Datatype::VEC_CHAR && dtype <= Datatype::VEC_STRING) ||
         dtype == Datatype::ARR_DBL_7;
}

bool isFloatingPoint(Datatype dtype) {
  const Datatype basic = basicDatatype(dtype);
  return basic == Datatype::FLOAT || basic == Datatype::DOUBLE || basic == Datatype::LONG_DOUBLE;
}

bool isComplexFloatingPoint(Datatype dtype) {
  const Datatype basic = basicDatatype(dtype);
  return basic == Datatype::CFLOAT || basic == Datatype::CDOUBLE ||
         basic == Datatype::CLONG_DOUBLE;
}

bool isInteger(Datatype dtype) {
  const Datatype basic = basicDatatype(dtype);
  return basic >= Datatype::SHORT && basic <= Datatype::ULONGLONG;
}

bool isChar(Datatype dtype) {
  const Datatype basic = basicDatatype(dtype);
  return basic == Datatype::CHAR || basic == Datatype::UCHAR || basic == Datatype::SCHAR;
}

Datatype basicDatatype(Datatype dtype) { return info(dtype).basic; }

Datatype toVectorType(Datatype dtype) {
  if (isVector(dtype) || dtype == Datatype::BOOL || dtype == Datatype::UNDEFINED) return dtype;
  for (const TypeInfo& candidate : kTypes) {
    if (candidate.dtype != dtype && candidate.basic == dtype &&
        candidate.dtype != Datatype::ARR_DBL_7) {
      return candidate.dtype;
    }
  }
  return dtype;
}

bool isSame(Datatype a, Datatype b) {
  if (a == b) return true;
  auto group = [](Datatype d) -> int {
    const Datatype basic = basicDatatype(d);
    const bool vector = isVector(d) && d != Datatype::ARR_DBL_7;
    int kind = 0;
    if (basic == Datatype::LONG || basic == Datatype::LONGLONG) kind = sizeof(long) == sizeof(long long) ? 1 : 0;
    if (basic == Datatype::ULONG || basic == Datatype::ULONGLONG) kind = sizeof(long) == sizeof(long long) ? 2 : 0;
    return kind == 0 ? -1 : kind * 2 + (vector ? 1 : 0);
  };
  return group(a) != -1 && group(a) == group(b);
}

std::string datatypeToString(Datatype dtype) { return info(dtype).name; }

Datatype stringToDatatype(const std::string& name) {
  for (const TypeInfo& candidate : kTypes) {
    if (name == candidate.name) return candidate.dtype;
  }
  throw std::invalid_argument("stringToDatatype: unknown Datatype '" + name + "'");
}

std::ostream& operator<<(std::ostream& out, Datatype dtype) {
  return out << datatypeToString(dtype);
}

}  // namespace openPMD
